"""tx.graph_util: TF 1.x's tf.compat.v1.graph_util -- freezing a trained graph for inference.

    frozen = tx.graph_util.convert_variables_to_constants(sess, graph.as_graph_def(), ["probs"])
    frozen = tx.graph_util.remove_training_nodes(frozen, protected_nodes=["probs"])
    open("model.pb", "wb").write(frozen.SerializeToString())

One C++ implementation (train/freeze_graph.h) serves Python and C++.
"""

from tensorflux import _pywrap_tensorflux as _pw
from tensorflux.graph_pb2 import GraphDef


def _parse(data):
    g = GraphDef()
    g.ParseFromString(data)
    return g


def _check_graph_def(graph_def):
    if not isinstance(graph_def, GraphDef):
        raise TypeError("graph_def must be a GraphDef proto, got %s" % type(graph_def).__name__)
    return graph_def.SerializeToString()


def _names(nodes, what):
    if isinstance(nodes, str):
        raise TypeError("%s must be a list of node names, got the string %r" % (what, nodes))
    return [str(n) for n in nodes]


def extract_sub_graph(graph_def, dest_nodes):
    """The GraphDef of the nodes `dest_nodes` depend on (data and control inputs), in the input's
    order. NotFoundError for a destination that is not in the graph."""
    return _parse(_pw.extract_sub_graph(_check_graph_def(graph_def),
                                        _names(dest_nodes, "dest_nodes")))


def remove_training_nodes(input_graph, protected_nodes=None):
    """`input_graph` with Identity nodes spliced out and CheckNumerics nodes removed (inputs
    rewired), keeping those named in `protected_nodes` and those with control inputs."""
    return _parse(_pw.remove_training_nodes(_check_graph_def(input_graph),
                                            _names(protected_nodes or [], "protected_nodes")))


def convert_variables_to_constants(sess, input_graph_def, output_node_names,
                                   variable_names_whitelist=None,
                                   variable_names_blacklist=None):
    """The subgraph of `output_node_names` with every variable (resource or ref) replaced by a
    Const of its current value in `sess` (ReadVariableOps become Identity). Raises
    FailedPreconditionError for an uninitialized variable, InvalidArgumentError when a node of
    the subgraph updates a variable or uses it other than by reading it."""
    sess._extend_graph()  # pylint: disable=protected-access
    return _parse(_pw.convert_variables_to_constants(
        sess._session, _check_graph_def(input_graph_def),  # pylint: disable=protected-access
        _names(output_node_names, "output_node_names"),
        _names(variable_names_whitelist or [], "variable_names_whitelist"),
        _names(variable_names_blacklist or [], "variable_names_blacklist")))
