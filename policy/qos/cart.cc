#include "policy/qos/cart.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

namespace pvfs::qos {

namespace {

// scikit-learn's constants: values closer than this are one value, and a
// node whose impurity is at most this is pure.
constexpr double kFeatureThreshold = 1e-7;
constexpr double kEpsilon = std::numeric_limits<double>::epsilon();

struct Split {
  int feature = -1;
  double threshold = 0;
  double proxy = -std::numeric_limits<double>::infinity();
  size_t pos = 0;  // samples [start, pos) go left once sorted by `feature`
};

class Builder {
 public:
  Builder(std::span<const Sample> samples, const TreeOptions& options)
      : samples_(samples), options_(options), order_(samples.size()) {
    std::iota(order_.begin(), order_.end(), size_t{0});
  }

  std::vector<RegressionTree::Node> build() {
    node(0, order_.size(), 0);
    return std::move(nodes_);
  }

 private:
  // Builds the subtree of order_[start, end) in preorder; returns its index.
  int32_t node(size_t start, size_t end, int depth) {
    const size_t n = end - start;
    double sum = 0, sq = 0;
    for (size_t i = start; i < end; ++i) {
      const double y = samples_[order_[i]].y;
      sum += y;
      sq += y * y;
    }
    const auto self = static_cast<int32_t>(nodes_.size());
    nodes_.push_back({});
    nodes_[self].value = sum / static_cast<double>(n);
    nodes_[self].samples = n;
    const double impurity = sq / static_cast<double>(n) - nodes_[self].value * nodes_[self].value;
    bool leaf = depth >= options_.max_depth || n < options_.min_samples_split || n < 2 * options_.min_samples_leaf ||
                impurity <= kEpsilon;
    if (leaf) return self;
    const Split best = find_split(start, end, sum);
    if (best.feature < 0) return self;
    // Put the left samples first, in the order of the best feature.
    sort_by(start, end, best.feature);
    nodes_[self].feature = best.feature;
    nodes_[self].threshold = best.threshold;
    const int32_t left = node(start, best.pos, depth + 1);
    const int32_t right = node(best.pos, end, depth + 1);
    nodes_[self].left = left;
    nodes_[self].right = right;
    return self;
  }

  void sort_by(size_t start, size_t end, int f) {
    std::stable_sort(order_.begin() + static_cast<std::ptrdiff_t>(start),
                     order_.begin() + static_cast<std::ptrdiff_t>(end),
                     [&](size_t a, size_t b) { return samples_[a].x[f] < samples_[b].x[f]; });
  }

  Split find_split(size_t start, size_t end, double sum_total) {
    Split best;
    const uint64_t min_leaf = options_.min_samples_leaf;
    for (int f = 0; f < kFeatures; ++f) {
      sort_by(start, end, f);
      auto x = [&](size_t i) { return samples_[order_[i]].x[f]; };
      if (x(end - 1) <= x(start) + kFeatureThreshold) continue;  // constant here
      double sum_left = 0;
      size_t moved = start;  // samples [start, moved) are counted in sum_left
      size_t p = start;
      while (p < end) {
        while (p + 1 < end && x(p + 1) <= x(p) + kFeatureThreshold) ++p;
        ++p;
        if (p >= end) break;
        const size_t n_left = p - start, n_right = end - p;
        if (n_left < min_leaf || n_right < min_leaf) continue;
        for (; moved < p; ++moved) sum_left += samples_[order_[moved]].y;
        const double sum_right = sum_total - sum_left;
        // Squared error reduction up to terms equal for every split.
        const double proxy = sum_left * sum_left / static_cast<double>(n_left) +
                             sum_right * sum_right / static_cast<double>(n_right);
        if (proxy > best.proxy) {
          best.proxy = proxy;
          best.feature = f;
          best.pos = p;
          best.threshold = x(p - 1) / 2.0 + x(p) / 2.0;
          if (best.threshold == x(p) || std::isinf(best.threshold)) best.threshold = x(p - 1);
        }
      }
    }
    return best;
  }

  std::span<const Sample> samples_;
  TreeOptions options_;
  std::vector<size_t> order_;
  std::vector<RegressionTree::Node> nodes_;
};

}  // namespace

RegressionTree::RegressionTree() : nodes_(1) {}

RegressionTree RegressionTree::fit(std::span<const Sample> samples, const TreeOptions& options) {
  PVFS_CHECK(!samples.empty());
  PVFS_CHECK(options.max_depth >= 0 && options.min_samples_leaf >= 1 && options.min_samples_split >= 2);
  for (const Sample& s : samples) {
    PVFS_CHECK(std::isfinite(s.y));
    for (double v : s.x) PVFS_CHECK(std::isfinite(v));
  }
  RegressionTree t;
  t.nodes_ = Builder(samples, options).build();
  return t;
}

Result<RegressionTree> RegressionTree::from_nodes(std::vector<Node> nodes) {
  if (nodes.empty()) return Status(Errc::corrupt, "a tree needs at least one node");
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    const auto bad = [&](const char* what) { return Status(Errc::corrupt, "node " + std::to_string(i) + ": " + what); };
    if (!std::isfinite(n.value) || !std::isfinite(n.threshold)) return bad("value or threshold not finite");
    const bool leaf = n.left < 0 && n.right < 0;
    if (leaf) continue;
    if (n.feature < 0 || n.feature >= kFeatures) return bad("feature out of range");
    // Children after their parent: no cycles, and predict() always ends.
    if (n.left <= static_cast<int64_t>(i) || n.right <= static_cast<int64_t>(i) ||
        n.left >= static_cast<int64_t>(nodes.size()) || n.right >= static_cast<int64_t>(nodes.size()))
      return bad("child index out of range");
  }
  RegressionTree t;
  t.nodes_ = std::move(nodes);
  return t;
}

size_t RegressionTree::leaf_of(const Features& x) const {
  size_t i = 0;
  while (nodes_[i].left >= 0) {
    const Node& n = nodes_[i];
    i = static_cast<size_t>(x[static_cast<size_t>(n.feature)] <= n.threshold ? n.left : n.right);
  }
  return i;
}

int RegressionTree::depth() const {
  std::vector<int> d(nodes_.size(), 0);
  int deepest = 0;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    deepest = std::max(deepest, d[i]);
    if (nodes_[i].left >= 0) {
      d[static_cast<size_t>(nodes_[i].left)] = d[i] + 1;
      d[static_cast<size_t>(nodes_[i].right)] = d[i] + 1;
    }
  }
  return deepest;
}

size_t RegressionTree::leaves() const {
  return static_cast<size_t>(std::count_if(nodes_.begin(), nodes_.end(), [](const Node& n) { return n.left < 0; }));
}

double cross_validated_error(std::span<const Sample> samples, const TreeOptions& options, int folds) {
  PVFS_CHECK(folds >= 2 && samples.size() >= static_cast<size_t>(folds));
  double error = 0;
  uint64_t scored = 0;
  std::vector<Sample> train;
  for (int f = 0; f < folds; ++f) {
    train.clear();
    for (size_t i = 0; i < samples.size(); ++i)
      if (static_cast<int>(i % static_cast<size_t>(folds)) != f) train.push_back(samples[i]);
    const RegressionTree tree = RegressionTree::fit(train, options);
    for (size_t i = static_cast<size_t>(f); i < samples.size(); i += static_cast<size_t>(folds)) {
      if (samples[i].y <= 0) continue;
      error += std::abs(tree.predict(samples[i].x) - samples[i].y) / samples[i].y;
      ++scored;
    }
  }
  return scored ? error / static_cast<double>(scored) : 0.0;
}

Result<Grown> grow(std::span<const Sample> samples, const GrowOptions& options) {
  if (options.folds < 2 || options.max_depth < 0 || options.min_samples_leaf < 1 || !(options.max_error > 0))
    return Status(Errc::invalid_argument, "need folds >= 2, max_depth >= 0, min_samples_leaf >= 1, max_error > 0");
  if (samples.size() < static_cast<size_t>(options.folds))
    return Status(Errc::invalid_argument, "fewer samples (" + std::to_string(samples.size()) + ") than folds");
  for (const Sample& s : samples)
    if (!std::isfinite(s.y) || !std::isfinite(s.x[0]) || !std::isfinite(s.x[1]))
      return Status(Errc::invalid_argument, "a sample is not finite");
  int best_depth = 0;
  double best_error = std::numeric_limits<double>::infinity();
  size_t last_nodes = 0;
  for (int depth = 0; depth <= options.max_depth; ++depth) {
    TreeOptions t{depth, options.min_samples_leaf, 2};
    // A deeper limit that grows no further node gives the same tree.
    const size_t nodes = RegressionTree::fit(samples, t).nodes().size();
    if (depth > 0 && nodes == last_nodes) break;
    last_nodes = nodes;
    const double error = cross_validated_error(samples, t, options.folds);
    if (error < best_error) {
      best_error = error;
      best_depth = depth;
    }
    if (error < options.max_error) break;
  }
  Grown g;
  g.depth = best_depth;
  g.cv_error = best_error;
  g.met = best_error < options.max_error;
  g.tree = RegressionTree::fit(samples, TreeOptions{best_depth, options.min_samples_leaf, 2});
  return g;
}

}  // namespace pvfs::qos
