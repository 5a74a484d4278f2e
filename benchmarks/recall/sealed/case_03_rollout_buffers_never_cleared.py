# Recall case 03 (sealed): the on-policy trajectory buffers are extended every batch, never cleared
# Thread: https://github.com/Lightning-Universe/lightning-bolts/issues/399
# Reported: in the REINFORCE model the lists of states, actions and q-values are not reset after
#   each training batch: every batch contains all episodes collected since the start, so the
#   lists (and the time per batch) keep growing.
# Confirmed cause: confirmed by the maintainers and fixed in PR #425 ("clear replay buffer after
#   trajectory collection"): `batch_states`, `batch_actions` and `batch_qvals` are appended to
#   after every `num_batch_episodes` episodes and yielded from, but never emptied. The fix
#   clears them once the batch has been yielded.
# Class: per-rollout buffers kept on self and extended without being reset
from collections import OrderedDict

import numpy as np
import torch
from pytorch_lightning import LightningModule
from torch.utils.data import DataLoader

from pl_bolts.datamodules.experience_source import ExperienceSourceDataset


class Reinforce(LightningModule):
    def __init__(self, env, net, agent, gamma=0.99, lr=0.01, batch_size=8, num_batch_episodes=4):
        super().__init__()
        self.env = env
        self.net = net
        self.agent = agent
        self.gamma = gamma
        self.lr = lr
        self.batch_size = batch_size
        self.num_batch_episodes = num_batch_episodes
        self.batch_states, self.batch_actions, self.batch_qvals = [], [], []
        self.cur_rewards, self.batch_episodes = [], 0
        self.state = self.env.reset()

    def calc_qvals(self, rewards):
        res, sum_r = [], 0.0
        for r in reversed(rewards):
            sum_r = sum_r * self.gamma + r
            res.append(sum_r)
        return list(reversed(res))

    def train_batch(self):
        for _ in range(self.batch_size):
            action = self.agent(self.state, self.device)[0]
            next_state, reward, done, _ = self.env.step(action)
            self.batch_states.append(self.state)  # leak: ANY
            self.batch_actions.append(action)
            self.cur_rewards.append(reward)
            self.state = next_state
            if done:
                self.batch_qvals.extend(self.calc_qvals(self.cur_rewards))
                self.cur_rewards = []
                self.batch_episodes += 1
                self.state = self.env.reset()

            if self.batch_episodes >= self.num_batch_episodes:
                for state, action, qval in zip(self.batch_states, self.batch_actions, self.batch_qvals):  # leak: ANY
                    yield state, action, qval
                self.batch_episodes = 0

    def loss(self, states, actions, scales):
        logits = self.net(states)
        log_prob = torch.log_softmax(logits, dim=1)
        log_prob_actions = scales * log_prob[range(self.batch_size), actions]
        return -log_prob_actions.mean()

    def training_step(self, batch, _):
        states, actions, scales = batch
        loss = self.loss(states.float(), actions, scales.float())
        self.log("loss", loss.detach())
        return OrderedDict({"loss": loss})

    def configure_optimizers(self):
        return [torch.optim.Adam(self.net.parameters(), lr=self.lr)]

    def train_dataloader(self):
        dataset = ExperienceSourceDataset(self.train_batch)
        return DataLoader(dataset=dataset, batch_size=self.batch_size)
