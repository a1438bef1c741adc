// A CART regression tree (Breiman et al.) over the two features of the
// U-Shape paper's model (§3.1): (AvgDist, AvgSize) of an epoch to the
// throughput bound B_real. Our own, small: Debian 12 has no C++ CART, the
// tree is trained where the job's profile is (pvfs-ctl, the MDS) and
// evaluated on every storage server each epoch, and two features with tens
// of thousands of samples train in well under a second. Its splits are
// scikit-learn's DecisionTreeRegressor's (squared error, thresholds halfway
// between neighbouring feature values, the same stopping rules), and
// tests/unit/qos_cart_sklearn.py checks that both grow the same tree on the
// same data. Pure values; thread-safe to read.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "shared/status.h"

namespace pvfs::qos {

inline constexpr int kFeatures = 2;  // 0: AvgDist (bytes), 1: AvgSize (bytes)
using Features = std::array<double, kFeatures>;

struct Sample {
  Features x{};
  double y = 0;  // the target (bytes/s)
};

struct TreeOptions {
  int max_depth = 8;              // >= 0; the root alone is depth 0
  uint64_t min_samples_leaf = 1;  // >= 1
  uint64_t min_samples_split = 2; // >= 2
};

class RegressionTree {
 public:
  // A node: a leaf when left < 0. A sample goes left when
  // x[feature] <= threshold.
  struct Node {
    int feature = -1;
    double threshold = 0;
    int32_t left = -1;
    int32_t right = -1;
    double value = 0;       // mean target of the training samples here
    uint64_t samples = 0;   // training samples that reached it
  };

  // The tree of a single leaf predicting 0.
  RegressionTree();

  // Fits the samples (non-empty, finite; checked) the way scikit-learn's
  // DecisionTreeRegressor(criterion="squared_error", splitter="best") does
  // with the same options: each node takes the split of largest squared
  // error reduction over both features (ties: the lower feature, then the
  // lower threshold), thresholds halfway between neighbouring distinct
  // values, and stops at max_depth, below min_samples_split samples, when
  // no split leaves min_samples_leaf on each side, or when its targets are
  // all equal.
  static RegressionTree fit(std::span<const Sample> samples, const TreeOptions& options);

  // A tree from its nodes (root first, children after their parent), as a
  // model file holds them: corrupt naming the first bad node for a child
  // index out of range or not after its parent, a feature out of range, a
  // value that is not finite, or an empty list.
  static Result<RegressionTree> from_nodes(std::vector<Node> nodes);

  double predict(const Features& x) const { return nodes_[leaf_of(x)].value; }
  // The index of the leaf `x` falls in.
  size_t leaf_of(const Features& x) const;
  const std::vector<Node>& nodes() const { return nodes_; }
  int depth() const;
  size_t leaves() const;

 private:
  std::vector<Node> nodes_;
};

struct GrowOptions {
  // Stop growing at the first depth whose cross-validated error is below
  // this: the mean of |predicted - actual| / actual over held-out samples
  // (samples with actual <= 0 are not scored).
  double max_error = 0.10;
  int folds = 5;  // >= 2; sample i is held out in fold i mod folds
  int max_depth = 12;
  uint64_t min_samples_leaf = 3;
};

struct Grown {
  RegressionTree tree;  // fitted on all samples at `depth`
  int depth = 0;
  double cv_error = 0;  // at `depth`
  bool met = false;     // cv_error < max_error
};

// §3.1: grows the tree a level at a time until the cross-validated error
// is below options.max_error; when no depth up to max_depth gets there,
// the depth with the lowest error. invalid_argument for fewer samples than
// folds or options out of range.
Result<Grown> grow(std::span<const Sample> samples, const GrowOptions& options);

// The cross-validated error of trees fitted with `options` (see
// GrowOptions::max_error). Requires samples.size() >= folds >= 2 (checked).
double cross_validated_error(std::span<const Sample> samples, const TreeOptions& options, int folds);

}  // namespace pvfs::qos
