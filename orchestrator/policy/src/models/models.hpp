#pragma once
// The model registry: what runs each surrogate the job file can name (jobs::surrogate_catalog):
// its factory, what it says of a model task (tasks.csv, `lbo status`, the report) and what its
// fits say in the log. A new model is its own file here with its entry, and one line in
// models.cpp. Private to policy/.

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/policy.hpp"
#include "lbo/surrogate/state.hpp"
#include "lbo/surrogate/surrogate.hpp"

namespace lbo::orchestrator::models {

/// What a model's log lines need of the run: model tasks are the warm-start tasks first, then
/// the run's own (each step of a stepwise task its own).
struct ModelLog {
  std::function<void(const std::string&)> log;
  std::function<std::string(std::size_t run_model_task)> name;  ///< "task", or "task/step_2"
  std::size_t warm = 0;       ///< model tasks before the run's own
  std::size_t run_tasks = 0;  ///< the run's own model tasks
};

/// The run's tasks as `lbo status` lists them: names, each one's model task in a checkpoint's
/// state, and the width their names are padded to.
struct SavedTasks {
  std::vector<std::string> names;
  std::vector<std::size_t> model_tasks;
  std::size_t width = 0;
};

struct ModelEntry {
  jobs::SurrogateKind kind = jobs::SurrogateKind::gp;
  /// The surrogate over encoded points of `dimension`, as [policy] configures it.
  std::unique_ptr<surrogate::Surrogate> (*make)(const jobs::PolicySpec& policy, int dimension) = nullptr;
  /// What the fitted `state` knows of model task `m` (lbo: its networks' usage; libo, jumbo:
  /// the GP it proposes from); `fitted`: the task had results in that fit. Null: nothing.
  void (*describe)(const surrogate::SurrogateState& state, std::size_t m, bool fitted, TaskModelReport& report) = nullptr;
  /// What changed from the fit `before` (null: none adopted yet) to `after`, said in the log.
  void (*log_fit)(const surrogate::SurrogateState* before, const surrogate::SurrogateState& after,
                  const jobs::PolicySpec& policy, const ModelLog& log) = nullptr;
  /// `lbo status`'s section on the model a checkpoint holds (LiBO's kernel per task, JUMBO's
  /// network and model per task), lines ending in '\n'; "" when `state` is not this model's.
  std::string (*status)(const surrogate::SurrogateState& state, const SavedTasks& tasks) = nullptr;
};

/// Every entry, in the order `lbo status` writes their sections.
std::span<const ModelEntry> model_entries();

/// The entry of `kind` (not random: that one has no model).
const ModelEntry& model_entry(jobs::SurrogateKind kind);

ModelEntry gp_model();
ModelEntry ablr_model();
ModelEntry lbo_model();
ModelEntry libo_model();
ModelEntry jumbo_model();

// Shared by the entries.

/// A feature model (ablr, lbo) wrapped in a GP on its residuals and a transfer GP, as [policy]
/// residual_gp and transfer_gp say (unset: `on_by_default`).
std::unique_ptr<surrogate::Surrogate> with_gp_layers(std::unique_ptr<surrogate::Surrogate> model,
                                                     const jobs::PolicySpec& policy, bool on_by_default);

/// The leave-one-out densities of a model's two GPs per model task, the one a switch takes
/// where it is the higher first (JUMBO: cold alone, warm; LiBO: plain, k̂). NaN: not compared.
struct SwitchDensities {
  const std::vector<double>* taken = nullptr;
  const std::vector<double>* other = nullptr;
  bool compared(std::size_t m) const;
  bool takes(std::size_t m) const { return compared(m) && (*taken)[m] > (*other)[m]; }
};

/// Each run task whose switch moved between a fit and the next (a first comparison that takes
/// the switch counts as a move): "<model>: <task> proposes from <describe(model task)>".
void log_switches(const std::string& model, SwitchDensities before, SwitchDensities after,
                  const std::function<std::string(std::size_t)>& describe, const ModelLog& log);

/// `name` padded to `width` and two spaces, as `lbo status` lists tasks.
std::string padded(const std::string& name, std::size_t width);

/// "0.5", "1.23": a number for the log.
std::string format_number(double v);

}  // namespace lbo::orchestrator::models
