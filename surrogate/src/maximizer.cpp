#include "lbo/surrogate/maximizer.hpp"

#include <LBFGSB.h>

#include <algorithm>
#include <boost/random/sobol.hpp>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

namespace lbo::surrogate {

namespace {

using Kind = CoordinateGroup::Kind;

static_assert(kMaxSobolDimension == BOOST_RANDOM_SOBOL_MAX_DIMENSION);

// Sobol points in [0,1)^g with a seeded Cranley–Patterson shift, so that repeated proposals
// do not all start from the same lattice. Boost's direction numbers stop at
// kMaxSobolDimension; above it the points are seeded uniform draws instead (the job file
// accepts any number of parameters, and in thousands of dimensions a few thousand points fill
// the box no more evenly as a low-discrepancy sequence than as a random one).
Eigen::MatrixXd shifted_sobol(int n, int g, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Eigen::MatrixXd points(n, g);
  if (g > kMaxSobolDimension) {
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < g; ++j) points(i, j) = u(rng);
    }
    return points;
  }
  boost::random::sobol engine(static_cast<std::size_t>(g));
  Eigen::VectorXd shift(g);
  for (int j = 0; j < g; ++j) shift(j) = u(rng);
  const double range = static_cast<double>(boost::random::sobol::max()) + 1.0;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < g; ++j) {
      const double v = static_cast<double>(engine()) / range + shift(j);
      points(i, j) = v - std::floor(v);
    }
  }
  return points;
}

// One raw coordinate per group → an encoded point (a one-hot group takes category ⌊u·w⌋).
Eigen::VectorXd expand(const Eigen::RowVectorXd& raw, const EncodedSpace& space) {
  Eigen::VectorXd x = Eigen::VectorXd::Zero(space.dimension());
  const auto& groups = space.groups();
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const CoordinateGroup& group = groups[g];
    if (group.kind == Kind::one_hot) {
      const int k = std::min(static_cast<int>(raw(static_cast<Eigen::Index>(g)) * group.width), group.width - 1);
      x(group.offset + k) = 1.0;
    } else {
      x(group.offset) = raw(static_cast<Eigen::Index>(g));
    }
  }
  return x;
}

// L-BFGS-B on the movable coordinates of x (the rest held), then canonicalized.
Maximum refine(const BoxObjective& objective, const EncodedSpace& space, Eigen::VectorXd x,
               const MaximizerOptions& options) {
  std::vector<int> free;
  const auto& groups = space.groups();
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (space.movable(static_cast<int>(g), x)) {
      for (int k = 0; k < groups[g].width; ++k) free.push_back(groups[g].offset + k);
    }
  }
  if (!free.empty()) {
    const auto m = static_cast<Eigen::Index>(free.size());
    Eigen::VectorXd z(m);
    for (Eigen::Index i = 0; i < m; ++i) z(i) = x(free[i]);
    auto negative = [&](const Eigen::VectorXd& zz, Eigen::VectorXd& grad) {
      Eigen::VectorXd full = x;
      for (Eigen::Index i = 0; i < m; ++i) full(free[i]) = zz(i);
      Eigen::VectorXd full_grad(full.size());
      const double value = objective.gradient(full, full_grad);
      grad.resize(m);
      for (Eigen::Index i = 0; i < m; ++i) grad(i) = -full_grad(free[i]);
      return std::isfinite(value) ? -value : std::numeric_limits<double>::infinity();
    };
    LBFGSpp::LBFGSBParam<double> param;
    param.max_iterations = options.max_iterations;
    param.epsilon = 1e-6;
    param.max_linesearch = 30;
    if (options.progress > 0) {
      param.past = 1;
      param.delta = options.progress;
    }
    try {
      LBFGSpp::LBFGSBSolver<double> solver(param);
      double fz = 0;
      solver.minimize(negative, z, fz, Eigen::VectorXd::Zero(m), Eigen::VectorXd::Ones(m));
    } catch (const std::exception&) {
      // A failed line search leaves z at its last accepted iterate, which is still valid.
    }
    for (Eigen::Index i = 0; i < m; ++i) x(free[i]) = std::clamp(z(i), 0.0, 1.0);
  }
  space.canonicalize(x);
  Eigen::VectorXd grad(x.size());
  return Maximum{x, objective.gradient(x, grad)};
}

// The best of x and every point that differs from x in one one-hot group's category.
Maximum enumerate_categories(const BoxObjective& objective, const EncodedSpace& space, Maximum best) {
  const auto& groups = space.groups();
  for (const CoordinateGroup& group : groups) {
    if (group.kind != Kind::one_hot) continue;
    Eigen::MatrixXd alternatives(group.width, space.dimension());
    for (int k = 0; k < group.width; ++k) {
      Eigen::VectorXd x = best.x;
      x.segment(group.offset, group.width).setZero();
      x(group.offset + k) = 1.0;
      space.canonicalize(x);
      alternatives.row(k) = x.transpose();
    }
    const Eigen::VectorXd values = objective.values(alternatives);
    for (int k = 0; k < group.width; ++k) {
      if (values(k) > best.value) best = Maximum{alternatives.row(k).transpose(), values(k)};
    }
  }
  return best;
}

}  // namespace

BoxSpace::BoxSpace(std::vector<CoordinateGroup> groups) : groups_(std::move(groups)) {
  for (const CoordinateGroup& g : groups_) dimension_ = std::max(dimension_, g.offset + g.width);
}

void BoxSpace::canonicalize(Eigen::Ref<Eigen::VectorXd> x) const {
  for (const CoordinateGroup& g : groups_) {
    if (g.kind == Kind::one_hot) {
      Eigen::Index k = 0;
      x.segment(g.offset, g.width).maxCoeff(&k);
      x.segment(g.offset, g.width).setZero();
      x(g.offset + k) = 1.0;
    } else {
      double& v = x(g.offset);
      v = std::clamp(v, 0.0, 1.0);
      if (g.kind == Kind::integer && g.levels > 1) v = std::round(v * (g.levels - 1)) / (g.levels - 1);
    }
  }
}

Eigen::MatrixXd candidate_points(const EncodedSpace& space, const MaximizerOptions& options, std::uint64_t seed,
                                 const std::vector<Eigen::VectorXd>& starts) {
  const int groups = static_cast<int>(space.groups().size());
  const Eigen::MatrixXd raw = shifted_sobol(options.candidates, std::max(groups, 1), seed);
  const auto n = static_cast<Eigen::Index>(options.candidates + starts.size());
  Eigen::MatrixXd X(n, space.dimension());
  for (Eigen::Index i = 0; i < options.candidates; ++i) {
    Eigen::VectorXd x = expand(raw.row(i), space);
    space.canonicalize(x);
    X.row(i) = x.transpose();
  }
  for (std::size_t i = 0; i < starts.size(); ++i) {
    Eigen::VectorXd x = starts[i];
    space.canonicalize(x);
    X.row(options.candidates + static_cast<Eigen::Index>(i)) = x.transpose();
  }
  return X;
}

std::vector<Maximum> maximize(const BoxObjective& objective, const EncodedSpace& space, const MaximizerOptions& options,
                              std::uint64_t seed, const std::vector<Eigen::VectorXd>& starts) {
  const Eigen::MatrixXd X = candidate_points(space, options, seed, starts);
  return maximize_from(objective, space, options, X, objective.values(X));
}

namespace {

// The rows of X in `order` (best first) that no row before them repeats (a discrete space maps
// many candidates to one configuration), the first `keep` of them; all when keep is 0. Equal
// rows need not score equally to the last bit, so the rows themselves are compared.
std::vector<Eigen::Index> distinct(const Eigen::MatrixXd& X, const std::vector<Eigen::Index>& order, int keep) {
  std::vector<Eigen::Index> kept;
  if (keep > 0) {  // a few: each is compared with the ones kept before it
    for (Eigen::Index i : order) {
      if (std::none_of(kept.begin(), kept.end(), [&](Eigen::Index k) { return X.row(k) == X.row(i); })) kept.push_back(i);
      if (static_cast<int>(kept.size()) == keep) break;
    }
    return kept;
  }
  // All: sorted by row, then by rank, a row equal to the one before it repeats it (one sort of
  // indices and no copies of rows; a std::set of rows cost a third of a proposal at 2,048 slots).
  std::vector<std::size_t> position(order.size());
  for (std::size_t r = 0; r < order.size(); ++r) position[static_cast<std::size_t>(order[r])] = r;
  std::vector<Eigen::Index> by_row(order);
  std::sort(by_row.begin(), by_row.end(), [&](Eigen::Index a, Eigen::Index b) {
    for (Eigen::Index j = 0; j < X.cols(); ++j) {
      if (X(a, j) != X(b, j)) return X(a, j) < X(b, j);
    }
    return position[static_cast<std::size_t>(a)] < position[static_cast<std::size_t>(b)];
  });
  std::vector<char> repeated(order.size(), 0);
  for (std::size_t i = 1; i < by_row.size(); ++i) {
    if (X.row(by_row[i]) == X.row(by_row[i - 1])) repeated[static_cast<std::size_t>(by_row[i])] = 1;
  }
  for (Eigen::Index i : order) {
    if (!repeated[static_cast<std::size_t>(i)]) kept.push_back(i);
  }
  return kept;
}

}  // namespace

std::vector<Maximum> maximize_from(const BoxObjective& objective, const EncodedSpace& space,
                                   const MaximizerOptions& options, const Eigen::MatrixXd& X,
                                   const Eigen::VectorXd& values) {
  const Eigen::Index n = X.rows();
  const auto ranks_before = [](double a, double b) {
    const bool fa = std::isfinite(a), fb = std::isfinite(b);
    return fa != fb ? fa : a > b;
  };
  std::vector<Eigen::Index> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](Eigen::Index a, Eigen::Index b) { return ranks_before(values(a), values(b)); });
  std::vector<Maximum> ranked;
  std::vector<Eigen::VectorXd> to_refine;
  for (Eigen::Index i : distinct(X, order, options.keep)) {
    ranked.push_back(Maximum{X.row(i).transpose(), values(i)});
    if (static_cast<int>(to_refine.size()) < options.refine) to_refine.push_back(ranked.back().x);
  }

  std::vector<Maximum> refined(to_refine.size());
  // No team for fewer than two: at thousands of slots, waking one for nothing cost more than
  // ranking the candidates (its other thread waits for a core the fit holds).
#pragma omp parallel for schedule(static) if (to_refine.size() > 1)
  for (std::size_t i = 0; i < to_refine.size(); ++i) {
    refined[i] = enumerate_categories(objective, space, refine(objective, space, to_refine[i], options));
  }
  // Refined points that are new (neither a candidate nor an earlier refined point) join the
  // candidates; all ranked by value.
  std::vector<Maximum> result;
  for (const Maximum& m : refined) {
    if (!std::isfinite(m.value)) continue;
    const auto same = [&](const Maximum& other) { return other.x == m.x; };
    const bool candidate = std::any_of(order.begin(), order.end(), [&](Eigen::Index i) { return X.row(i).transpose() == m.x; });
    if (!candidate && std::none_of(result.begin(), result.end(), same)) result.push_back(m);
  }
  if (result.empty()) return ranked;
  result.insert(result.end(), std::make_move_iterator(ranked.begin()), std::make_move_iterator(ranked.end()));
  std::stable_sort(result.begin(), result.end(), [&](const Maximum& a, const Maximum& b) { return ranks_before(a.value, b.value); });
  return result;
}

}  // namespace lbo::surrogate
