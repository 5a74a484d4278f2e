# Recall case 11 (sealed): a bounded lru_cache on a world's method keeps the training world alive
# Thread: https://github.com/facebookresearch/ParlAI/pull/2487
# Reported: with models that barely fit on the GPU, training runs out of memory when the final
#   validation model is loaded: the training agent's memory is never released.
# Confirmed cause: the maintainer's merged PR ("Fix a GPU leak"): "This insidious bug was due to
#   `lru_cache` keeping a copy of the world in memory, and therefore the agent, and therefore
#   the model." `@lru_cache(maxsize=1)` on `num_examples` holds `self` (the world) as a cache
#   key after training is done with it. Fixed by caching the value on an attribute by hand.
# Class: a cache over a method keeps self (and the model it owns) alive, even with maxsize=1
from functools import lru_cache

import torch


class BatchWorld:
    def __init__(self, opt, agents, inner_world):
        self.opt = opt
        self.agents = agents
        self.inner_world = inner_world

    def getID(self):
        return self.inner_world.getID()

    @lru_cache(maxsize=1)  # leak: ANY
    def num_examples(self):
        return self.inner_world.num_examples()

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
