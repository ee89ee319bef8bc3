#include "sections.hpp"

namespace lbo::jobs::job_file {

namespace {

// The largest step a job file may give: a rung table of η^k steps stays far from overflow.
constexpr std::int64_t kMaxStep = 1'000'000'000;

std::optional<StoppingRule> rule_named(std::string_view name) {
  for (const StoppingRuleTraits& t : stopping_rule_catalog()) {
    if (t.name == name) return t.rule;
  }
  return std::nullopt;
}

// The rules that have `what`, named for an error: "\"asha\" or \"hyperband\"".
std::string rules_with(bool StoppingRuleTraits::*what) {
  std::vector<std::string> names;
  for (const StoppingRuleTraits& t : stopping_rule_catalog()) {
    if (what == nullptr || t.*what) names.push_back(in_quotes(std::string(t.name)));
  }
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return text;
}

std::optional<CurveModel> curve_model_named(std::string_view name) {
  for (const CurveModel model : {CurveModel::last, CurveModel::rungs, CurveModel::highest_rung, CurveModel::forecast}) {
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
    if (*mode == "promotion" && !traits_of(e.rule).promotes) {
      r.error(*t.get("mode"), "early_stopping.mode",
              "\"promotion\" is for rule = " + rules_with(&StoppingRuleTraits::promotes) + "; the " +
                  std::string(to_string(e.rule)) + " rule only stops (mode = \"stop\")");
    } else if (*mode == "promotion") {
      e.mode = StoppingMode::promotion;
    } else if (*mode != "stop") {
      r.error(*t.get("mode"), "early_stopping.mode", "must be \"stop\" or \"promotion\", not " + in_quotes(*mode));
    }
  }
  if (const auto model = r.get_string(t, "model", prefix, false)) {
    if (const auto known = curve_model_named(*model)) {
      if (*known == CurveModel::forecast && !traits_of(e.rule).forecasts) {
        r.error(*t.get("model"), "early_stopping.model",
                "\"forecast\" is for rule = " + rules_with(&StoppingRuleTraits::forecasts) + " (only it forecasts a trial's "
                "final value); use \"last\", \"rungs\" or \"highest_rung\" with the " + std::string(to_string(e.rule)) + " rule");
      } else {
        e.model = *known;
      }
    } else {
      r.error(*t.get("model"), "early_stopping.model",
              "must be \"last\", \"rungs\", \"highest_rung\" or \"forecast\", not " + in_quotes(*model));
    }
  } else if (traits_of(e.rule).forecasts) {
    // What it judged a stopped trial by is the better guess of where the trial would have ended
    // than its value at the rung (bench/README.md, "Early stopping", decision `predictive-forecast-model`).
    e.model = CurveModel::forecast;
  }
}

// The keys only some rules take (their traits say which): `brackets`, `min_trials`, `transfer`,
// `min_probability`.
// `valid`: min_step, max_step and eta were read (the brackets' count follows from them).
void read_rule_keys(Reader& r, const toml::table& t, bool valid, EarlyStoppingSpec& e) {
  const std::string prefix = "early_stopping";
  const StoppingRuleTraits& rule = traits_of(e.rule);
  const auto not_for = [&](const char* key, bool StoppingRuleTraits::*what) {
    r.error(*t.get(key), prefix + "." + key, "is for rule = " + rules_with(what) + ", not " + in_quotes(std::string(rule.name)));
  };
  if (t.get("brackets") != nullptr) {
    const int most = valid ? most_brackets(e) : 100;
    if (!rule.brackets) {
      not_for("brackets", &StoppingRuleTraits::brackets);
    } else if (const auto n = r.get_int_in(t, "brackets", prefix, false, 1, most,
                                           "must be between 1 and " + std::to_string(most) +
                                               " (the brackets whose first rung r·η^b is below max_step, and one "
                                               "that runs every trial to max_step)")) {
      e.brackets = *n;
    }
  } else if (rule.brackets && valid) {
    e.brackets = most_brackets(e);
  }
  if (t.get("min_trials") != nullptr) {
    if (!rule.min_trials) {
      not_for("min_trials", &StoppingRuleTraits::min_trials);
    } else if (const auto n = r.get_int_in(t, "min_trials", prefix, false, 1, 100'000, "must be in 1..100000")) {
      e.min_trials = *n;
    }
  }
  if (const auto transfer = r.get_bool(t, "transfer", prefix)) {
    if (!rule.transfer) {
      not_for("transfer", &StoppingRuleTraits::transfer);
    } else {
      e.transfer = *transfer;
    }
  }
  if (t.get("min_probability") != nullptr) {
    if (!rule.forecasts) {
      not_for("min_probability", &StoppingRuleTraits::forecasts);
    } else if (const auto p = r.get_number(t, "min_probability", prefix, false)) {
      if (*p > 0 && *p < 1) {
        e.min_probability = *p;
      } else {
        r.error(*t.get("min_probability"), prefix + ".min_probability",
                "must be a probability between 0 and 1 (exclusive), such as 0.05");
      }
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
                           "transfer", "min_probability", "model", "keep_checkpoints", "objective"});
  EarlyStoppingSpec e;
  bool valid = true;
  if (const auto rule = r.get_string(t, "rule", prefix, false)) {
    if (const auto known = rule_named(*rule)) {
      e.rule = *known;
    } else {
      r.error(*t.get("rule"), "early_stopping.rule", "must be " + rules_with(nullptr) + ", not " + in_quotes(*rule));
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
  read_rule_keys(r, t, valid, e);
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
