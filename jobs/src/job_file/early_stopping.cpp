#include "sections.hpp"

namespace lbo::jobs::job_file {

namespace {

// The largest step a job file may give: a rung table of η^k steps stays far from overflow.
constexpr std::int64_t kMaxStep = 1'000'000'000;

std::optional<StoppingRule> rule_named(std::string_view name) {
  for (const StoppingRule rule : {StoppingRule::asha, StoppingRule::hyperband, StoppingRule::median}) {
    if (to_string(rule) == name) return rule;
  }
  return std::nullopt;
}

std::optional<CurveModel> curve_model_named(std::string_view name) {
  for (const CurveModel model : {CurveModel::last, CurveModel::rungs, CurveModel::highest_rung}) {
    if (to_string(model) == name) return model;
  }
  return std::nullopt;
}

// How many brackets have a rung below max_step, plus the one that runs every trial to the end.
int most_brackets(const EarlyStoppingSpec& e) {
  int brackets = 1;
  for (std::int64_t first = e.min_step; first < e.max_step; first *= e.eta) ++brackets;
  return brackets;
}

// `mode` (after `rule`: the median rule only stops) and `model`.
void read_mode_and_model(Reader& r, const toml::table& t, EarlyStoppingSpec& e) {
  const std::string prefix = "early_stopping";
  if (const auto mode = r.get_string(t, "mode", prefix, false)) {
    if (*mode == "promotion" && e.rule == StoppingRule::median) {
      r.error(*t.get("mode"), "early_stopping.mode",
              "\"promotion\" is for rule = \"asha\" or \"hyperband\"; the median rule only stops (mode = \"stop\")");
    } else if (*mode == "promotion") {
      e.mode = StoppingMode::promotion;
    } else if (*mode != "stop") {
      r.error(*t.get("mode"), "early_stopping.mode", "must be \"stop\" or \"promotion\", not " + in_quotes(*mode));
    }
  }
  if (const auto model = r.get_string(t, "model", prefix, false)) {
    if (const auto known = curve_model_named(*model)) {
      e.model = *known;
    } else {
      r.error(*t.get("model"), "early_stopping.model",
              "must be \"last\", \"rungs\" or \"highest_rung\", not " + in_quotes(*model));
    }
  }
}

// `objective`: with several objectives, the one the reports give (read after [objective]).
void read_stopping_objective(Reader& r, const toml::table& t, const ObjectiveSpec& o, EarlyStoppingSpec& e) {
  const auto name = r.get_string(t, "objective", "early_stopping", false);
  if (!name) return;
  if (o.several.empty()) {
    r.error(*t.get("objective"), "early_stopping.objective",
            "is for a job of several objectives ([objective] objectives); with one, its reports give that one");
    return;
  }
  std::string names;
  for (std::size_t i = 0; i < o.several.size(); ++i) {
    if (o.several[i].name() == *name) {
      e.objective = i;
      return;
    }
    names += (i ? ", " : "") + in_quotes(o.several[i].name());
  }
  r.error(*t.get("objective"), "early_stopping.objective", in_quotes(*name) + " is none of [objective] objectives (" + names + ")");
}

}  // namespace

void read_early_stopping(Reader& r, const toml::table& t, JobSpec& job) {
  const std::string prefix = "early_stopping";
  r.check_keys(t, prefix, {"rule", "step_name", "min_step", "max_step", "eta", "brackets", "min_trials", "mode",
                           "transfer", "model", "keep_checkpoints", "objective"});
  EarlyStoppingSpec e;
  bool valid = true;
  if (const auto rule = r.get_string(t, "rule", prefix, false)) {
    if (const auto known = rule_named(*rule)) {
      e.rule = *known;
    } else {
      r.error(*t.get("rule"), "early_stopping.rule", "must be \"asha\", \"hyperband\" or \"median\", not " + in_quotes(*rule));
      valid = false;
    }
  }
  if (const auto name = r.get_string(t, "step_name", prefix, false)) {
    if (name->empty() || name->size() > 40) {
      r.error(*t.get("step_name"), "early_stopping.step_name", "must be a short name of the unit, such as \"epoch\"");
    } else {
      e.step_name = *name;
    }
  }
  const std::string step_rule = "must be an integer between 1 and " + std::to_string(kMaxStep);
  if (const auto n = r.get_int_in(t, "min_step", prefix, false, 1, kMaxStep, step_rule)) e.min_step = *n;
  if (const auto n = r.get_int_in(t, "max_step", prefix, true, 1, kMaxStep, step_rule)) {
    e.max_step = *n;
    if (e.max_step <= e.min_step) {
      r.error(*t.get("max_step"), "early_stopping.max_step",
              "must be greater than min_step (" + std::to_string(e.min_step) + ")");
    }
  } else {
    valid = false;
  }
  if (const auto n = r.get_int_in(t, "eta", prefix, false, 2, 100, "must be an integer between 2 and 100")) e.eta = *n;
  if (const toml::node* node = t.get("brackets")) {
    const int most = valid ? most_brackets(e) : 100;
    if (e.rule != StoppingRule::hyperband) {
      r.error(*node, "early_stopping.brackets", "is for rule = \"hyperband\"; asha and median have one bracket");
    } else if (const auto n = r.get_int_in(t, "brackets", prefix, false, 1, most,
                                           "must be between 1 and " + std::to_string(most) +
                                               " (the brackets whose first rung r·η^b is below max_step, and one "
                                               "that runs every trial to max_step)")) {
      e.brackets = *n;
    }
  } else if (e.rule == StoppingRule::hyperband && valid) {
    e.brackets = most_brackets(e);
  }
  if (const toml::node* node = t.get("min_trials")) {
    if (e.rule != StoppingRule::median) {
      r.error(*node, "early_stopping.min_trials", "is for rule = \"median\"");
    } else if (const auto n = r.get_int_in(t, "min_trials", prefix, false, 1, 100'000, "must be in 1..100000")) {
      e.min_trials = *n;
    }
  }
  if (const auto transfer = r.get_bool(t, "transfer", prefix)) {
    if (e.rule == StoppingRule::median) {
      r.error(*t.get("transfer"), "early_stopping.transfer", "is for rule = \"asha\" or \"hyperband\"");
    } else {
      e.transfer = *transfer;
    }
  }
  read_mode_and_model(r, t, e);
  if (const auto keep = r.get_string(t, "keep_checkpoints", prefix, false)) {
    using Keep = EarlyStoppingSpec::KeepCheckpoints;
    if (e.mode != StoppingMode::promotion) {
      r.error(*t.get("keep_checkpoints"), "early_stopping.keep_checkpoints",
              "is for mode = \"promotion\" (only a paused trial has a checkpoint folder)");
    } else if (*keep == "best" || *keep == "all" || *keep == "none") {
      e.keep_checkpoints = *keep == "best" ? Keep::best : *keep == "all" ? Keep::all : Keep::none;
    } else {
      r.error(*t.get("keep_checkpoints"), "early_stopping.keep_checkpoints",
              "must be \"best\", \"all\" or \"none\", not " + in_quotes(*keep));
    }
  }
  read_stopping_objective(r, t, job.objective, e);
  if (job.objective.stepwise > 0) {
    r.error(t.source(), "early_stopping", "cannot be combined with [objective] stepwise (a stepwise result has no "
                                          "intermediate steps to stop on); remove one");
  }
  job.early_stopping = e;
}

}  // namespace lbo::jobs::job_file
