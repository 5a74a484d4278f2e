# Fixed twin of case 05: Trace wraps a DiGraph instead of inheriting from it and clears the wrapped graph's __dict__ in __del__ (the maintainer's merged work-around)
# Thread: https://github.com/pyro-ppl/pyro/issues/798
# Reported: memory grew over SVI iterations and was only occasionally collected; the number of live Variables and Trace objects kept rising during inference
# Confirmed cause: Trace inherited from networkx.DiGraph, whose first access to the nodes view caches NodeView(self) in the instance __dict__ (graph -> view -> graph), so each trace and every tensor stored on its sites survived until the cyclic collector ran; the maintainer's merged fix (#801, confirmed by the reporter: memory constant across training) wraps a DiGraph in Trace instead of inheriting and clears the wrapped graph's __dict__ in Trace.__del__
# Class: reference cycle between a container and its cached view keeps per-step device tensors alive
import torch


class NodeView(object):
    def __init__(self, graph):
        self._graph = graph

    def __getitem__(self, name):
        return self._graph._node[name]

    def __iter__(self):
        return iter(self._graph._node)


class DiGraph(object):
    def __init__(self):
        self._node = {}
        self._succ = {}

    @property
    def nodes(self):
        nodes = NodeView(self)
        self.__dict__["nodes"] = nodes
        return nodes

    def add_node(self, name, **attrs):
        self._node[name] = attrs
        self._succ.setdefault(name, {})


class Trace(object):
    def __init__(self, graph_type="flat"):
        self._graph = DiGraph()
        self.graph_type = graph_type

    def __del__(self):
        self._graph.__dict__.clear()

    @property
    def nodes(self):
        return self._graph.nodes

    def add_site(self, name, value, log_prob):
        self._graph.add_node(name, type="sample", value=value, log_prob=log_prob)

    def log_prob_sum(self):
        return sum(self.nodes[name]["log_prob"].sum() for name in self.nodes)


def run_with_trace(fn, *args):
    trace = Trace()
    fn(trace, *args)
    return trace


def svi_step(model, guide, optimizer, data):
    guide_trace = run_with_trace(guide, data)
    model_trace = run_with_trace(model, guide_trace, data)
    elbo = model_trace.log_prob_sum() - guide_trace.log_prob_sum()
    loss = -elbo
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
