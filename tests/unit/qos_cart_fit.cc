// Helper of qos_cart_sklearn.py: fits policy/qos's CART on a training file
// and prints its predictions for a query file, so the script can compare
// them with scikit-learn's DecisionTreeRegressor on the same data.
// Usage: qos_cart_fit MAX_DEPTH MIN_SAMPLES_LEAF TRAIN QUERY
//   TRAIN: lines "x0 x1 y"; QUERY: lines "x0 x1".
// Prints "nodes N depth D", one line "feature threshold" per node in
// preorder (leaves "-1 0"), then "prediction leaf" per query line.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <vector>

#include "policy/qos/cart.h"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: qos_cart_fit MAX_DEPTH MIN_SAMPLES_LEAF TRAIN QUERY\n");
    return 2;
  }
  pvfs::qos::TreeOptions options;
  options.max_depth = std::atoi(argv[1]);
  options.min_samples_leaf = static_cast<uint64_t>(std::atoll(argv[2]));
  std::vector<pvfs::qos::Sample> train;
  std::ifstream in(argv[3]);
  pvfs::qos::Sample s;
  while (in >> s.x[0] >> s.x[1] >> s.y) train.push_back(s);
  if (train.empty()) {
    std::fprintf(stderr, "qos_cart_fit: no training samples in %s\n", argv[3]);
    return 1;
  }
  const auto tree = pvfs::qos::RegressionTree::fit(train, options);
  std::printf("nodes %zu depth %d\n", tree.nodes().size(), tree.depth());
  for (const auto& n : tree.nodes()) std::printf("%d %.17g\n", n.feature, n.left < 0 ? 0.0 : n.threshold);
  std::ifstream q(argv[4]);
  pvfs::qos::Features x;
  while (q >> x[0] >> x[1]) std::printf("%.17g %zu\n", tree.predict(x), tree.leaf_of(x));
  return 0;
}
