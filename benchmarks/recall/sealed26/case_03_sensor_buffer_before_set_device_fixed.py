# Fixed twin of case 03: make the sensor's GPU the current device before the first CUDA allocation
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
            device = torch.device("cuda", self._sim.gpu_device)
            torch.cuda.set_device(device)
            if self._spec.sensor_type == "SEMANTIC":
                self._buffer = torch.empty(height, width, dtype=torch.int32, device=device)
            elif self._spec.sensor_type == "DEPTH":
                self._buffer = torch.empty(height, width, dtype=torch.float32, device=device)
            else:
                self._buffer = torch.empty(height, width, 4, dtype=torch.uint8, device=device)
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
