# Fixed twin of case 72: the bootstrap value is computed under torch.no_grad() and returned as
#   a plain number.
# Thread: https://github.com/ray-project/ray/issues/6962
# Class: eval helper with grad on -- value/critic call during rollouts
import torch
from ray.rllib.evaluation.postprocessing import compute_advantages
from ray.rllib.policy.sample_batch import SampleBatch


class ValueNetworkMixin:
    def __init__(self, obs_space, action_space, config):
        if config["use_gae"]:

            def value(ob, prev_action, prev_reward, *state):
                with torch.no_grad():
                    model_out, _ = self.model(
                        {
                            SampleBatch.CUR_OBS: self._convert_to_tensor([ob]),
                            SampleBatch.PREV_ACTIONS: self._convert_to_tensor([prev_action]),
                            SampleBatch.PREV_REWARDS: self._convert_to_tensor([prev_reward]),
                            "is_training": False,
                        },
                        [self._convert_to_tensor(s) for s in state],
                        self._convert_to_tensor([1]),
                    )
                    return self.model.value_function()[0].item()

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
