#include "lbo/surrogate/meta_kgl.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>

namespace lbo::surrogate {

namespace {

// The problem with each task's blocks side by side: Φ_s = [Φ_s^(1) … Φ_s^(p)], group j in
// columns [offset_s[j], offset_s[j + 1]).
struct Stacked {
  std::vector<Eigen::MatrixXd> phi;
  std::vector<std::vector<Eigen::Index>> offset;
  const std::vector<Eigen::VectorXd>* y = nullptr;
  double inverse_n = 0;  // 1/N
  int groups = 0;
};

Stacked stack(const GroupLassoProblem& problem) {
  Stacked s;
  s.groups = problem.groups();
  s.y = &problem.targets;
  const Eigen::Index n = problem.observations();
  s.inverse_n = n > 0 ? 1.0 / static_cast<double>(n) : 0.0;
  for (std::size_t t = 0; t < problem.features.size(); ++t) {
    const auto& blocks = problem.features[t];
    if (static_cast<int>(blocks.size()) != s.groups) throw std::invalid_argument("group lasso: tasks differ in groups");
    std::vector<Eigen::Index> offset{0};
    for (const auto& b : blocks) offset.push_back(offset.back() + b.cols());
    Eigen::MatrixXd phi(problem.targets[t].size(), offset.back());
    for (int j = 0; j < s.groups; ++j) {
      if (blocks[j].cols() && blocks[j].rows() != phi.rows()) throw std::invalid_argument("group lasso: block rows differ");
      phi.middleCols(offset[j], blocks[j].cols()) = blocks[j];
    }
    s.phi.push_back(std::move(phi));
    s.offset.push_back(std::move(offset));
  }
  return s;
}

std::vector<Eigen::VectorXd> zeros(const Stacked& s) {
  std::vector<Eigen::VectorXd> beta;
  for (const auto& phi : s.phi) beta.push_back(Eigen::VectorXd::Zero(phi.cols()));
  return beta;
}

Eigen::VectorXd group_norms(const Stacked& s, const std::vector<Eigen::VectorXd>& beta) {
  Eigen::VectorXd squares = Eigen::VectorXd::Zero(s.groups);
  for (std::size_t t = 0; t < beta.size(); ++t) {
    for (int j = 0; j < s.groups; ++j) {
      squares(j) += beta[t].segment(s.offset[t][j], s.offset[t][j + 1] - s.offset[t][j]).squaredNorm();
    }
  }
  return squares.cwiseSqrt();
}

// ∇ of the loss (1/N) Σ ‖y_s − Φ_s β_s‖² per task, and the loss.
double loss_gradient(const Stacked& s, const std::vector<Eigen::VectorXd>& beta, std::vector<Eigen::VectorXd>& gradient) {
  double loss = 0;
  gradient.resize(beta.size());
  for (std::size_t t = 0; t < beta.size(); ++t) {
    const Eigen::VectorXd residual = (*s.y)[t] - s.phi[t] * beta[t];
    loss += residual.squaredNorm();
    gradient[t] = -2.0 * s.inverse_n * (s.phi[t].transpose() * residual);
  }
  return loss * s.inverse_n;
}

std::vector<std::vector<Eigen::VectorXd>> unstack(const Stacked& s, const std::vector<Eigen::VectorXd>& beta) {
  std::vector<std::vector<Eigen::VectorXd>> blocks(beta.size());
  for (std::size_t t = 0; t < beta.size(); ++t) {
    for (int j = 0; j < s.groups; ++j) {
      blocks[t].push_back(beta[t].segment(s.offset[t][j], s.offset[t][j + 1] - s.offset[t][j]));
    }
  }
  return blocks;
}

}  // namespace

Eigen::Index GroupLassoProblem::observations() const {
  Eigen::Index n = 0;
  for (const auto& y : targets) n += y.size();
  return n;
}

double group_lasso_objective(const GroupLassoProblem& problem, const std::vector<std::vector<Eigen::VectorXd>>& beta,
                             double lambda) {
  const Eigen::Index n = problem.observations();
  double loss = 0;
  Eigen::VectorXd squares = Eigen::VectorXd::Zero(problem.groups());
  for (std::size_t t = 0; t < problem.targets.size(); ++t) {
    Eigen::VectorXd fitted = Eigen::VectorXd::Zero(problem.targets[t].size());
    for (int j = 0; j < problem.groups(); ++j) {
      if (problem.features[t][j].cols() == 0) continue;
      fitted += problem.features[t][j] * beta[t][j];
      squares(j) += beta[t][j].squaredNorm();
    }
    loss += (problem.targets[t] - fitted).squaredNorm();
  }
  return (n > 0 ? loss / static_cast<double>(n) : 0.0) + lambda * squares.cwiseSqrt().sum();
}

double group_lasso_lambda_max(const GroupLassoProblem& problem) {
  const Stacked s = stack(problem);
  std::vector<Eigen::VectorXd> gradient;
  loss_gradient(s, zeros(s), gradient);
  return group_norms(s, gradient).maxCoeff();
}

GroupLassoSolution solve_group_lasso(const GroupLassoProblem& problem, double lambda, const GroupLassoSolution* warm,
                                     int max_iterations, double tolerance) {
  const Stacked s = stack(problem);
  // L = (2/N) max_s ‖Φ_s‖₂², the Lipschitz constant of the loss's gradient.
  double lipschitz = 0;
  for (const auto& phi : s.phi) {
    if (phi.size() == 0) continue;
    const Eigen::MatrixXd gram = phi.rows() <= phi.cols() ? Eigen::MatrixXd(phi * phi.transpose())
                                                          : Eigen::MatrixXd(phi.transpose() * phi);
    lipschitz = std::max(lipschitz, Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(gram, Eigen::EigenvaluesOnly)
                                        .eigenvalues()
                                        .maxCoeff());
  }
  lipschitz *= 2.0 * s.inverse_n;
  GroupLassoSolution solution;
  std::vector<Eigen::VectorXd> beta = zeros(s);
  if (warm) {
    for (std::size_t t = 0; t < beta.size() && t < warm->beta.size(); ++t) {
      for (int j = 0; j < s.groups && j < static_cast<int>(warm->beta[t].size()); ++j) {
        if (warm->beta[t][j].size() == s.offset[t][j + 1] - s.offset[t][j]) {
          beta[t].segment(s.offset[t][j], warm->beta[t][j].size()) = warm->beta[t][j];
        }
      }
    }
  }
  if (lipschitz <= 0) {
    solution.beta = unstack(s, beta);
    solution.group_norms = group_norms(s, beta);
    solution.converged = true;
    return solution;
  }
  const double step = 1.0 / lipschitz;
  std::vector<Eigen::VectorXd> momentum = beta, previous = beta, gradient;
  double t_k = 1;
  for (int iteration = 1; iteration <= max_iterations; ++iteration) {
    loss_gradient(s, momentum, gradient);
    previous = beta;
    for (std::size_t t = 0; t < beta.size(); ++t) beta[t] = momentum[t] - step * gradient[t];
    // Block soft-thresholding over each group's coefficients in every task.
    const Eigen::VectorXd norms = group_norms(s, beta);
    for (int j = 0; j < s.groups; ++j) {
      const double shrink = norms(j) > 0 ? std::max(0.0, 1.0 - step * lambda / norms(j)) : 0.0;
      for (std::size_t t = 0; t < beta.size(); ++t) {
        beta[t].segment(s.offset[t][j], s.offset[t][j + 1] - s.offset[t][j]) *= shrink;
      }
    }
    double change = 0, scale = 0, restart_test = 0;
    for (std::size_t t = 0; t < beta.size(); ++t) {
      if (beta[t].size() == 0) continue;
      change = std::max(change, (beta[t] - previous[t]).cwiseAbs().maxCoeff());
      scale = std::max(scale, beta[t].cwiseAbs().maxCoeff());
      restart_test += (momentum[t] - beta[t]).dot(beta[t] - previous[t]);
    }
    solution.iterations = iteration;
    if (change <= tolerance * std::max(scale, 1e-12)) {
      solution.converged = true;
      break;
    }
    // Gradient-based adaptive restart: drop the momentum when it points uphill.
    if (restart_test > 0) {
      t_k = 1;
      momentum = beta;
      continue;
    }
    const double t_next = 0.5 * (1.0 + std::sqrt(1.0 + 4.0 * t_k * t_k));
    for (std::size_t t = 0; t < beta.size(); ++t) {
      momentum[t] = beta[t] + ((t_k - 1.0) / t_next) * (beta[t] - previous[t]);
    }
    t_k = t_next;
  }
  solution.beta = unstack(s, beta);
  solution.group_norms = group_norms(s, beta);
  return solution;
}

namespace {

// One task's part of a META-KGL problem: its training points, and per kernel the map from
// coefficients to the representer weights, α = V Λ^{-1/2} β (so f(x) = k_j(x, X) α).
struct TaskFeatures {
  Eigen::MatrixXd X;
  std::vector<Eigen::MatrixXd> features;  // [kernel]
  std::vector<Eigen::MatrixXd> to_alpha;  // [kernel]
};

// A square root Φ of K_j(X, X) (eigenvalues above 1e-10 · n) and, when asked, V Λ^{-1/2}.
Eigen::MatrixXd square_root(const BaseKernel& kernel, const Eigen::MatrixXd& X, Eigen::MatrixXd* to_alpha) {
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(kernel.gram(X, X));
  const Eigen::VectorXd& values = eigen.eigenvalues();
  const double floor = 1e-10 * static_cast<double>(std::max<Eigen::Index>(X.rows(), 1));
  std::vector<Eigen::Index> kept;
  for (Eigen::Index i = 0; i < values.size(); ++i) {
    if (values(i) > floor) kept.push_back(i);
  }
  const auto rank = static_cast<Eigen::Index>(kept.size());
  Eigen::MatrixXd phi(X.rows(), rank);
  if (to_alpha) to_alpha->resize(X.rows(), rank);
  for (Eigen::Index c = 0; c < rank; ++c) {
    const double root = std::sqrt(values(kept[static_cast<std::size_t>(c)]));
    phi.col(c) = eigen.eigenvectors().col(kept[static_cast<std::size_t>(c)]) * root;
    if (to_alpha) to_alpha->col(c) = eigen.eigenvectors().col(kept[static_cast<std::size_t>(c)]) / root;
  }
  return phi;
}

TaskFeatures task_features(const KernelDictionary& dictionary, const Eigen::MatrixXd& X) {
  TaskFeatures f;
  f.X = X;
  for (const BaseKernel& kernel : dictionary.kernels()) {
    Eigen::MatrixXd to_alpha;
    f.features.push_back(square_root(kernel, X, &to_alpha));
    f.to_alpha.push_back(std::move(to_alpha));
  }
  return f;
}

Eigen::VectorXd standardized(const Eigen::VectorXd& y) {
  return Standardization::of(y).apply(y);
}

// Each task's folds: the indices of the points each fold trains on and holds out.
using Splits = std::vector<std::vector<std::pair<std::vector<Eigen::Index>, std::vector<Eigen::Index>>>>;

// The groups worth a place on the path: above ω × the largest norm, largest first (ties: the
// lower index), at most 40.
std::vector<int> support_candidates(const Eigen::VectorXd& norms, double omega) {
  constexpr std::size_t kMostCandidates = 40;
  const double floor = omega * (norms.size() > 0 ? norms.maxCoeff() : 0.0);
  std::vector<int> candidates;
  for (int j = 0; j < static_cast<int>(norms.size()); ++j) {
    if (norms(j) > floor && norms(j) > 0) candidates.push_back(j);
  }
  std::sort(candidates.begin(), candidates.end(),
            [&](int a, int b) { return norms(a) > norms(b) || (norms(a) == norms(b) && a < b); });
  if (candidates.size() > kMostCandidates) candidates.resize(kMostCandidates);
  return candidates;
}

// Per fold, the held-out squared error of the kernel sum K_t (over `size` kernels) per task,
// with the best of the ridges (the GP fits its noise; without that choice here a rough kernel
// would be chosen for the ridge it adds to the diagonal).
Eigen::RowVectorXd fold_errors(const std::vector<Observations>& data, const Splits& splits, int folds,
                               const std::vector<Eigen::MatrixXd>& sums, std::size_t size) {
  constexpr std::array<double, 4> kRidges = {1e-3, 1e-2, 1e-1, 1.0};
  Eigen::RowVectorXd best;
  for (double ridge : kRidges) {
    Eigen::RowVectorXd errors = Eigen::RowVectorXd::Zero(folds);
    for (std::size_t t = 0; t < data.size(); ++t) {
      const Eigen::MatrixXd combined = sums[t] / static_cast<double>(size);
      for (int fold = 0; fold < folds; ++fold) {
        const auto& [in, out] = splits[t][static_cast<std::size_t>(fold)];
        if (in.empty() || out.empty()) continue;
        Eigen::MatrixXd A = combined(in, in);
        A.diagonal().array() += ridge * std::max(A.diagonal().mean(), 1e-12);
        const Eigen::VectorXd alpha = A.ldlt().solve(data[t].y(in));
        errors(fold) += (data[t].y(out) - combined(out, in) * alpha).squaredNorm();
      }
    }
    if (best.size() == 0 || errors.sum() < best.sum()) best = errors;
  }
  return best;
}

// How many of the path's first kernels to keep: the fewest whose mean error is within one
// standard error (over the folds) of the path's best.
std::size_t one_standard_error_size(const std::vector<Eigen::RowVectorXd>& errors, int folds) {
  std::size_t best = 0;
  for (std::size_t k = 1; k < errors.size(); ++k) {
    if (errors[k].mean() < errors[best].mean()) best = k;
  }
  const Eigen::RowVectorXd& e = errors[best];
  const double spread = std::sqrt((e.array() - e.mean()).square().sum() / std::max(1, folds - 1));
  const double bound = e.mean() + spread / std::sqrt(static_cast<double>(folds));
  for (std::size_t k = 0; k < errors.size(); ++k) {
    if (errors[k].mean() <= bound) return k + 1;
  }
  return best + 1;
}

// Ĵ from the group lasso's solution (the paper's threshold ω, chosen from the data). The
// candidates are the groups above the floor `omega` · max_j ‖β̂^(j)‖₂ (at most 40, the largest).
// Forward selection adds, one at a time, the candidate whose addition gives the lowest
// cross-validated error of the kernel LiBO then uses, k̂ = (1/|S|) Σ_{j∈S} k_j, in kernel ridge
// regression per task (ridge 1e-3 … 1 · mean k̂(x, x), the best; outputs standardized) on the folds that
// chose λ; Ĵ is the smallest set on that path whose error is within one standard error of the
// path's best. Why: λ chosen for prediction keeps groups that only fit noise with small norms
// (about a quarter of the true groups' on the paper's synthetic family), the paper's ω has
// constants that are not known in practice, and ranking by norm does not work across kernel
// families: a rough full-rank kernel (Matérn, ℓ = 0.03) takes a large norm wherever a
// function is not exactly in the span of the others, yet predicts nothing away from the points.
std::vector<int> choose_support(const KernelDictionary& dictionary, const std::vector<Observations>& data,
                                const std::vector<std::vector<int>>& fold_of, int folds, const Eigen::VectorXd& norms,
                                const MetaKglOptions& options) {
  const std::vector<int> candidates = support_candidates(norms, options.omega);
  if (candidates.size() <= 1) return candidates;

  // Each candidate's Gram matrix on each task's points, and each task's folds, once.
  std::vector<std::vector<Eigen::MatrixXd>> gram(data.size());  // [task][candidate]
  Splits splits(data.size());
  for (std::size_t t = 0; t < data.size(); ++t) {
    for (int j : candidates) gram[t].push_back(dictionary.kernel(j).gram(data[t].X, data[t].X));
    for (int fold = 0; fold < folds; ++fold) {
      std::vector<Eigen::Index> in, out;
      for (Eigen::Index i = 0; i < data[t].y.size(); ++i) {
        (fold_of[t][static_cast<std::size_t>(i)] == fold ? out : in).push_back(i);
      }
      splits[t].emplace_back(std::move(in), std::move(out));
    }
  }
  std::vector<Eigen::MatrixXd> sums(data.size());
  for (std::size_t t = 0; t < data.size(); ++t) sums[t] = Eigen::MatrixXd::Zero(data[t].y.size(), data[t].y.size());
  std::vector<bool> taken(candidates.size(), false);
  std::vector<int> path;                   // candidates in the order added
  std::vector<Eigen::RowVectorXd> errors;  // fold errors after each addition
  for (std::size_t size = 1; size <= candidates.size(); ++size) {
    std::size_t best = candidates.size();
    Eigen::RowVectorXd best_errors;
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      if (taken[c]) continue;
      std::vector<Eigen::MatrixXd> trial(sums);
      for (std::size_t t = 0; t < data.size(); ++t) trial[t] += gram[t][c];
      const Eigen::RowVectorXd e = fold_errors(data, splits, folds, trial, size);
      if (best == candidates.size() || e.sum() < best_errors.sum()) best = c, best_errors = e;
    }
    taken[best] = true;
    for (std::size_t t = 0; t < data.size(); ++t) sums[t] += gram[t][best];
    path.push_back(candidates[best]);
    errors.push_back(best_errors);
  }
  const std::size_t size = one_standard_error_size(errors, folds);
  std::vector<int> chosen(path.begin(), path.begin() + static_cast<std::ptrdiff_t>(size));
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

GroupLassoProblem problem_of(const std::vector<TaskFeatures>& features, const std::vector<Eigen::VectorXd>& y) {
  GroupLassoProblem p;
  for (const TaskFeatures& f : features) p.features.push_back(f.features);
  p.targets = y;
  return p;
}

// K-fold cross-validation: point i of task s (in a shuffled order) is in fold (o_s + i) mod K,
// so every fold holds out some points of each task and leaves each task at least one.
std::vector<std::vector<int>> assign_folds(const std::vector<Observations>& data, int folds, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<int>> fold_of(data.size());
  for (std::size_t t = 0; t < data.size(); ++t) {
    std::vector<int> order(static_cast<std::size_t>(data[t].y.size()));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    const int o = static_cast<int>(rng() % static_cast<std::uint64_t>(folds));
    fold_of[t].resize(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) fold_of[t][order[i]] = (o + static_cast<int>(i)) % folds;
  }
  return fold_of;
}

// The held-out mean squared error of the group-lasso path (λ = ratio · λ_max for each of
// `ratios`, each solution warm-started from the one before) per λ (rows) and fold (columns).
Eigen::MatrixXd path_errors(const KernelDictionary& dictionary, const std::vector<Observations>& data,
                            const std::vector<std::vector<int>>& fold_of, int folds, const std::vector<double>& ratios,
                            double lambda_max) {
  const std::size_t n_lambda = ratios.size();
  Eigen::MatrixXd errors = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(n_lambda), folds);
  for (int fold = 0; fold < folds; ++fold) {
    std::vector<TaskFeatures> train;
    std::vector<Eigen::VectorXd> train_y;
    std::vector<Observations> held;
    Eigen::Index held_out = 0;
    for (std::size_t t = 0; t < data.size(); ++t) {
      std::vector<Eigen::Index> in, out;
      for (std::size_t i = 0; i < fold_of[t].size(); ++i) {
        (fold_of[t][i] == fold ? out : in).push_back(static_cast<Eigen::Index>(i));
      }
      train.push_back(task_features(dictionary, data[t].X(in, Eigen::all)));
      train_y.push_back(data[t].y(in));
      held.push_back({data[t].X(out, Eigen::all), data[t].y(out)});
      held_out += static_cast<Eigen::Index>(out.size());
    }
    if (held_out == 0) continue;
    const GroupLassoProblem problem = problem_of(train, train_y);
    GroupLassoSolution path;
    for (std::size_t l = 0; l < n_lambda; ++l) {
      path = solve_group_lasso(problem, ratios[l] * lambda_max, l ? &path : nullptr);
      double squared = 0;
      for (std::size_t t = 0; t < data.size(); ++t) {
        if (held[t].y.size() == 0) continue;
        Eigen::VectorXd predicted = Eigen::VectorXd::Zero(held[t].y.size());
        for (int j = 0; j < dictionary.size(); ++j) {
          if (path.beta[t][j].size() == 0 || path.group_norms(j) == 0) continue;
          predicted += dictionary.kernel(j).gram(held[t].X, train[t].X) * (train[t].to_alpha[j] * path.beta[t][j]);
        }
        squared += (held[t].y - predicted).squaredNorm();
      }
      errors(static_cast<Eigen::Index>(l), fold) = squared / static_cast<double>(held_out);
    }
  }
  return errors;
}

}  // namespace

Eigen::MatrixXd kernel_features(const BaseKernel& kernel, const Eigen::MatrixXd& X) {
  return square_root(kernel, X, nullptr);
}

MetaKglResult meta_kgl(const KernelDictionary& dictionary, const std::vector<Observations>& tasks, std::uint64_t seed,
                       const MetaKglOptions& options) {
  MetaKglResult result;
  result.group_norms = Eigen::VectorXd::Zero(dictionary.size());
  std::vector<Observations> data;
  for (const Observations& task : tasks) {
    if (task.y.size() >= 2) data.push_back({task.X, standardized(task.y)});
  }
  if (data.empty() || dictionary.size() == 0) return result;

  std::vector<TaskFeatures> all;
  std::vector<Eigen::VectorXd> all_y;
  for (const Observations& task : data) {
    all.push_back(task_features(dictionary, task.X));
    all_y.push_back(task.y);
  }
  const GroupLassoProblem full = problem_of(all, all_y);
  result.lambda_max = group_lasso_lambda_max(full);

  const int folds = std::max(2, options.folds);
  const std::vector<std::vector<int>> fold_of = assign_folds(data, folds, seed);
  const std::size_t n_lambda = options.lambda_ratios.size();
  const Eigen::MatrixXd errors = path_errors(dictionary, data, fold_of, folds, options.lambda_ratios, result.lambda_max);
  // The 1-SE rule: the largest λ whose mean error is within one standard error of the best.
  const Eigen::VectorXd mean = errors.rowwise().mean();
  Eigen::Index best = 0;
  mean.minCoeff(&best);
  const Eigen::RowVectorXd best_errors = errors.row(best);
  const double spread = std::sqrt((best_errors.array() - mean(best)).square().sum() / std::max(1, folds - 1));
  const double bound = mean(best) + spread / std::sqrt(static_cast<double>(folds));
  std::size_t chosen = static_cast<std::size_t>(best);
  for (std::size_t l = 0; l < n_lambda; ++l) {
    if (mean(static_cast<Eigen::Index>(l)) <= bound) {
      chosen = l;
      break;
    }
  }
  result.lambda = options.lambda_ratios[chosen] * result.lambda_max;
  // The chosen λ on all the data, reached along the path for a warm start.
  GroupLassoSolution path;
  for (std::size_t l = 0; l <= chosen; ++l) {
    path = solve_group_lasso(full, options.lambda_ratios[l] * result.lambda_max, l ? &path : nullptr);
  }
  result.group_norms = path.group_norms;
  result.active = choose_support(dictionary, data, fold_of, folds, path.group_norms, options);
  return result;
}

}  // namespace lbo::surrogate
