# Thread: https://github.com/facebookresearch/habitat-sim/pull/193
# Reported: on a multi-GPU machine with gpu2gpu transfer, every simulator process told to use GPU 1 eventually also loads the CUDA runtime (and holds memory) on GPU 0.
# Confirmed cause: (the merged PR, tested by its author) the Sensor wrapper allocates its torch frame buffer with device=torch.device("cuda", gpu_device) without ever calling torch.cuda.set_device, so CUDA is initialised on the default device 0 as well as on the intended one; calling torch.cuda.set_device(device) first keeps GPU 0 clean.
# Class: CUDA initialised on the default device because torch.cuda.set_device is never called
import numpy as np
import torch


class Sensor:
    """Wraps one rendering sensor of an agent and owns the buffer its frames are read into."""

    def __init__(self, sim, agent, sensor_id):
        self._sim = sim
        self._agent = agent
        self._sensor_object = self._agent.sensors.get(sensor_id)
        self._spec = self._sensor_object.specification()
        self._sim.renderer.bind_render_target(self._sensor_object)
        height, width = self._spec.resolution

        if self._spec.gpu2gpu_transfer:
            device = torch.device("cuda", self._sim.gpu_device)  # leak: ANY
            if self._spec.sensor_type == "SEMANTIC":
                self._buffer = torch.empty(height, width, dtype=torch.int32, device=device)  # leak: ANY
            elif self._spec.sensor_type == "DEPTH":
                self._buffer = torch.empty(height, width, dtype=torch.float32, device=device)  # leak: ANY
            else:
                self._buffer = torch.empty(height, width, 4, dtype=torch.uint8, device=device)  # leak: ANY
        else:
            if self._spec.sensor_type == "SEMANTIC":
                self._buffer = np.empty((height, width), dtype=np.uint32)
            elif self._spec.sensor_type == "DEPTH":
                self._buffer = np.empty((height, width), dtype=np.float32)
            else:
                self._buffer = np.empty((height, width, self._spec.channels), dtype=np.uint8)

    def get_observation(self):
        self._sim.renderer.draw(self._sensor_object)
        if self._spec.gpu2gpu_transfer:
            with torch.no_grad():
                self._sensor_object.read_frame_gpu(self._buffer.data_ptr())
                return self._buffer.flip(0).clone()
        self._sensor_object.read_frame(self._buffer)
        return np.flip(self._buffer, axis=0).copy()
