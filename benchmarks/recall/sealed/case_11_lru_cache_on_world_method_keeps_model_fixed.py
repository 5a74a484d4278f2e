# Fixed twin of case 11: the value is cached on the instance, so nothing outside keeps the world.
# Thread: https://github.com/facebookresearch/ParlAI/pull/2487
# Class: a cache over a method keeps self (and the model it owns) alive, even with maxsize=1
import torch


class BatchWorld:
    def __init__(self, opt, agents, inner_world):
        self.opt = opt
        self.agents = agents
        self.inner_world = inner_world

    def getID(self):
        return self.inner_world.getID()

    def num_examples(self):
        if not hasattr(self, "_num_examples"):
            self._num_examples = self.inner_world.num_examples()
        return self._num_examples

    def parley(self):
        self.inner_world.parley()

    def epoch_done(self):
        return self.inner_world.epoch_done()

    def shutdown(self):
        for agent in self.agents:
            agent.shutdown()


class TrainLoop:
    def __init__(self, opt, create_agent, create_task):
        self.opt = opt
        self.create_agent = create_agent
        self.create_task = create_task
        self.agent = create_agent(opt)
        self.world = create_task(opt, self.agent)

    def train(self):
        while not self.world.epoch_done():
            self.world.parley()
        total = self.world.num_examples()
        self.world.shutdown()
        del self.world
        del self.agent
        torch.cuda.empty_cache()
        valid_agent = self.create_agent(dict(self.opt, model_file=self.opt["model_file"]))
        valid_world = self.create_task(dict(self.opt, datatype="valid"), valid_agent)
        while not valid_world.epoch_done():
            valid_world.parley()
        return total, valid_world.num_examples()
