# Fixed twin of case 16: the stored callable is the bound method of obj2, not a lambda closing over self, so no cycle keeps x0 alive
# Thread: https://github.com/pytorch/pytorch/issues/51883
# Reported: memory_allocated grows by ~1.1 GB per call to test_fcn and only drops back at irregular points (1144 -> 9155 MiB -> 1144 MiB)
# Confirmed cause: `self._leak_fcn = lambda: self.obj2.fcn()` makes instance -> lambda -> instance, so the instance holding x0 is freed only by Python's cyclic GC, not by refcounting; the reporter's own log shows memory returning when the collector runs (issue closed by maintainers as triaged/not a PyTorch bug: weaker)
# Class: reference cycle (closure capturing self) keeping device tensors alive between calls
import torch


class Class2(object):
    def fcn(self):
        pass


class Class1(object):
    def __init__(self, x0):
        self.x0 = x0
        self.obj2 = Class2()
        self._leak_fcn = self.obj2.fcn

    def run(self):
        self._leak_fcn()
        return self.x0 * 2


def fcn(x0):
    obj1 = Class1(x0)
    return obj1.run()


def test_fcn():
    shape = (50000000, 3)
    y0 = torch.randn(shape).to(torch.double).to(torch.device("cuda"))
    y = fcn(y0)
    return y.sum()


if __name__ == "__main__":
    for i in range(100):
        test_fcn()
        torch.cuda.empty_cache()
        print("memory allocated: %f MiB" % float(torch.cuda.memory_allocated() / 1024 ** 2))
