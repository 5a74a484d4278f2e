# Recall case 72: the bootstrap value for GAE is computed in rollout postprocessing with grad on
# Thread: https://github.com/ray-project/ray/issues/6962
# Reported: PPO with the torch backend is far slower than with tensorflow on Atari and uses up
#   all RAM (and, per #7182, GPU memory) as training goes on.
# Confirmed cause: a user bisected it and the maintainer's PR (#7238, "PPO torch memory leak")
#   states it: the torch policy's `value()` helper, called in `postprocess_ppo_gae` for the
#   last observation of every sample batch, runs the model without `torch.no_grad()`, so every
#   rollout leaves an autograd graph behind through the returned value; adding
#   `with torch.no_grad():` to `value()` (around `compute_advantages`) fixed RAM and GPU growth.
# Class: eval helper with grad on -- value/critic call during rollouts
import torch
from ray.rllib.evaluation.postprocessing import compute_advantages
from ray.rllib.policy.sample_batch import SampleBatch


class ValueNetworkMixin:
    def __init__(self, obs_space, action_space, config):
        if config["use_gae"]:

            def value(ob, prev_action, prev_reward, *state):
                model_out, _ = self.model(  # leak: ANY
                    {
                        SampleBatch.CUR_OBS: self._convert_to_tensor([ob]),
                        SampleBatch.PREV_ACTIONS: self._convert_to_tensor([prev_action]),
                        SampleBatch.PREV_REWARDS: self._convert_to_tensor([prev_reward]),
                        "is_training": False,
                    },
                    [self._convert_to_tensor(s) for s in state],
                    self._convert_to_tensor([1]),
                )
                return self.model.value_function()[0]

        else:

            def value(ob, prev_action, prev_reward, *state):
                return 0.0

        self._value = value


def postprocess_ppo_gae(policy, sample_batch, other_agent_batches=None, episode=None):
    completed = sample_batch[SampleBatch.DONES][-1]
    if completed:
        last_r = 0.0
    else:
        next_state = []
        for i in range(policy.num_state_tensors()):
            next_state.append([sample_batch["state_out_{}".format(i)][-1]])
        last_r = policy._value(
            sample_batch[SampleBatch.NEXT_OBS][-1],
            sample_batch[SampleBatch.ACTIONS][-1],
            sample_batch[SampleBatch.REWARDS][-1],
            *next_state,
        )
    return compute_advantages(
        sample_batch,
        last_r,
        policy.config["gamma"],
        policy.config["lambda"],
        use_gae=policy.config["use_gae"],
    )
