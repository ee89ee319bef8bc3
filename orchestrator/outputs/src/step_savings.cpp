#include "lbo/orchestrator/step_savings.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace lbo::orchestrator {

namespace {

// Per attempt with two reports or more: (elapsed at its last − at its first) / (steps between).
void add_step_times(const Trial& t, std::vector<double>& per_step) {
  for (std::size_t i = 0; i < t.reports.size();) {
    std::size_t j = i;
    while (j + 1 < t.reports.size() && t.reports[j + 1].attempt == t.reports[i].attempt) ++j;
    const StepReport &first = t.reports[i], &last = t.reports[j];
    if (last.step > first.step && last.elapsed_s >= first.elapsed_s) {
      per_step.push_back((last.elapsed_s - first.elapsed_s) / static_cast<double>(last.step - first.step));
    }
    i = j + 1;
  }
}

std::string duration_text(double seconds) {
  char text[48];
  if (seconds < 120) {
    std::snprintf(text, sizeof text, "%.0f s", seconds);
  } else if (seconds < 7200) {
    std::snprintf(text, sizeof text, "%.1f min", seconds / 60);
  } else {
    std::snprintf(text, sizeof text, "%.1f h", seconds / 3600);
  }
  return text;
}

}  // namespace

StepSavings step_savings(const RunState& state, std::int64_t max_step, int task) {
  StepSavings s;
  std::vector<double> per_step;
  for (const Trial& t : state.trials()) {
    if (t.lost() || (task >= 0 && t.task != task) || !t.finished) continue;
    const workers::TrialStatus status = t.outcome.status;
    if (status != workers::TrialStatus::ok && status != workers::TrialStatus::stopped) continue;
    ++s.trials;
    s.spent += t.steps_spent();
    add_step_times(t, per_step);
  }
  s.full = max_step * s.trials;
  if (per_step.empty()) {
    s.seconds_per_step = std::nan("");
  } else {
    const auto mid = per_step.begin() + static_cast<std::ptrdiff_t>(per_step.size() / 2);
    std::nth_element(per_step.begin(), mid, per_step.end());
    s.seconds_per_step = *mid;
  }
  return s;
}

std::string describe(const StepSavings& s, const std::string& step_name) {
  if (s.trials == 0 || s.full <= 0) return "";
  char share[32];
  std::snprintf(share, sizeof share, "%.1f%%", 100.0 * static_cast<double>(s.saved()) / static_cast<double>(s.full));
  const std::string steps = step_name == "step" || step_name.empty() ? "steps" : step_name + " steps";
  std::string text = std::to_string(s.spent) + " of " + std::to_string(s.full) + " " + steps + " (" + share + " saved";
  if (std::isfinite(s.saved_seconds()) && s.saved() > 0) text += ": about " + duration_text(s.saved_seconds()) + " of trial time";
  return text + ")";
}

}  // namespace lbo::orchestrator
