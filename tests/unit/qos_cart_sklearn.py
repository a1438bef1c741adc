#!/usr/bin/python3
"""policy/qos's CART against scikit-learn's DecisionTreeRegressor, the
reference CART, on the same data. Both must grow the same tree: the same
number of nodes and depth, the training points grouped alike by the leaves
(so every node splits the training samples alike), the same predictions there (to
1e-9, relative), and the same threshold wherever both split on the same
feature. Where two splits part the samples identically (an exact tie, as
with few samples and repeated values), either is right and the trees may
differ on the feature and on which side a group goes; such nodes are counted and shown, and fresh points
must still agree wherever their path meets no such node.

Usage: qos_cart_sklearn.py PATH_TO_qos_cart_fit
A missing scikit-learn is a failure, not a skip: scripts/install-deps
installs python3-sklearn.
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    from sklearn.tree import DecisionTreeRegressor
except ImportError as e:
    print(f"FAIL: scikit-learn is not importable ({e}); run scripts/install-deps "
          "(it installs the Debian package python3-sklearn)")
    sys.exit(1)


def dataset(seed, n, kind):
    """Features are whole numbers below 2^20 (exact in the float32 that
    scikit-learn converts features to), like byte counts in KiB."""
    rng = np.random.default_rng(seed)
    dist = rng.integers(0, 1 << 20, n).astype(np.float64)
    size = rng.integers(1, 33, n).astype(np.float64) * 4
    if kind == "disk":
        # A throughput shaped like a disk's: transfer over seek + transfer.
        seek = np.where(dist == 0, 0.0, 0.5 + 8.0 * np.sqrt(dist / (1 << 20)))
        y = size / (seek + size / 30.0) + rng.normal(0, 0.3, n)
    elif kind == "steps":
        y = np.where(dist < 1000, 100.0, 20.0) + np.where(size > 64, 15.0, 0.0) + rng.normal(0, 1, n)
    else:
        y = rng.normal(50, 10, n)
    return np.column_stack([dist, size]), y


def main():
    helper = sys.argv[1]
    failures = 0
    cases = 0
    for seed, n, kind, depth, leaf in [
        (1, 200, "disk", 3, 1), (2, 500, "disk", 6, 3), (3, 1000, "steps", 4, 5),
        (4, 300, "noise", 5, 1), (5, 2000, "disk", 10, 5), (6, 50, "steps", 8, 2),
    ]:
        cases += 1
        X, y = dataset(seed, n, kind)
        Q, _ = dataset(seed + 100, 300, kind)
        ref = DecisionTreeRegressor(max_depth=depth, min_samples_leaf=leaf, random_state=0).fit(X, y)
        with tempfile.TemporaryDirectory() as tmp:
            train, query = os.path.join(tmp, "train"), os.path.join(tmp, "query")
            np.savetxt(train, np.column_stack([X, y]), fmt="%.17g")
            points = np.vstack([X, Q])
            np.savetxt(query, points, fmt="%.17g")
            lines = subprocess.run([helper, str(depth), str(leaf), train, query],
                                   capture_output=True, text=True, check=True).stdout.strip().split("\n")
        head = lines[0].split()
        n_nodes = int(head[1])
        nodes = [l.split() for l in lines[1:1 + n_nodes]]
        rows = [l.split() for l in lines[1 + n_nodes:]]
        ours = np.array([float(r[0]) for r in rows])
        our_leaf = np.array([int(r[1]) for r in rows])
        t = ref.tree_
        theirs = ref.predict(points)
        their_leaf = ref.apply(points)
        name = f"seed {seed}, {n} samples, {kind}, max_depth {depth}, min_samples_leaf {leaf}"
        problems = []
        if n_nodes != t.node_count:
            problems.append(f"{n_nodes} nodes, sklearn {t.node_count}")
        if int(head[3]) != ref.get_depth():
            problems.append(f"depth {head[3]}, sklearn {ref.get_depth()}")
        tied = set()
        if not problems:
            for i, (f, thr) in enumerate(nodes):
                f, thr = int(f), float(thr)
                if t.children_left[i] < 0:
                    if f >= 0:
                        problems.append(f"node {i} splits, sklearn's is a leaf")
                elif f != t.feature[i]:
                    tied.add(i)
                elif thr != t.threshold[i]:
                    problems.append(f"node {i}: threshold {thr!r} on feature {f}, sklearn {t.threshold[i]!r}")
            if len(ours) != len(theirs):
                problems.append(f"{len(ours)} predictions for {len(theirs)} points")
        if not problems:
            n = len(X)
            # The training points grouped by leaf: the same groups in both
            # trees (a tie may put a group on the other side: ids differ).
            groups = lambda leaves: {frozenset(np.nonzero(leaves[:n] == v)[0]) for v in set(leaves[:n])}
            if groups(our_leaf) != groups(their_leaf):
                problems.append("the leaves group the training points differently")
            close = lambda a, b: np.abs(a - b) <= 1e-9 * np.maximum(1.0, np.abs(b))
            if not close(ours[:n], theirs[:n]).all():
                problems.append("predictions on the training points differ")
            # Fresh points whose sklearn path meets no tied node must agree.
            path = ref.decision_path(points[n:]).toarray().astype(bool)
            untied = ~path[:, sorted(tied)].any(axis=1) if tied else np.ones(len(points) - n, bool)
            bad = untied & ~close(ours[n:], theirs[n:])
            if close(ours[n:], theirs[n:]).mean() < 0.9:
                problems.append("fewer than 90% of fresh predictions agree")
            if bad.any():
                i = int(np.argmax(bad))
                problems.append(f"{int(bad.sum())} fresh predictions differ, first at {points[n + i].tolist()}: "
                                f"ours {ours[n + i]!r}, sklearn {theirs[n + i]!r}")
        if problems:
            failures += 1
            print(f"FAIL {name}: " + "; ".join(problems))
        else:
            ties = f", {len(tied)} tied node(s) split on the other feature" if tied else ""
            print(f"ok   {name}: {ref.tree_.node_count} nodes, depth {ref.get_depth()}{ties}")
    print(f"{cases - failures} passed, {failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
