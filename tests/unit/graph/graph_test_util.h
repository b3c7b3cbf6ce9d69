// Helpers shared by the graph-layer tests: text GraphDefs and node-name listings.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tensorflux/graph/graph.h"
#include "tensorflux/graph/graph_def_io.h"

namespace tensorflux::testing {

// Parses a text GraphDef; fails the test (and returns an empty one) when it does not parse.
inline GraphDef TextGraph(const std::string& text) {
  GraphDef g;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &g)) << text;
  return g;
}

// A graph imported from a text GraphDef, or nullptr (with a test failure) on error.
inline std::unique_ptr<Graph> MakeGraph(const std::string& text) {
  auto g = GraphFromGraphDef(TextGraph(text));
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? std::move(*g) : nullptr;
}

// Live node names in id order.
inline std::vector<std::string> NodeNames(const Graph& g) {
  std::vector<std::string> out;
  for (const Node* n : g.nodes()) out.push_back(n->name());
  return out;
}

// "src:k" of the data edge into dst's input `i`, or "" when unconnected.
inline std::string InputOf(const Node* dst, int i) {
  auto e = dst->input_edge(i);
  if (!e.ok()) return "";
  return (*e)->src()->name() + ":" + std::to_string((*e)->src_output());
}

}  // namespace tensorflux::testing
