#pragma once
// The objective protocol: how a command line is expanded for one trial and how its result
// is read back (docs/objectives.md, "Objective protocol").

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lbo::jobs {

/// Placeholder names an objective argument may use, written `{name}`.
inline constexpr std::array<std::string_view, 5> kPlaceholders = {"dataset", "task", "trial",
                                                                  "params_file", "workdir"};

/// The first `{name}` in `arg` that is not one of kPlaceholders, or nullopt.
std::optional<std::string> find_unknown_placeholder(std::string_view arg);
/// Whether `arg` uses `{name}`.
bool uses_placeholder(std::string_view arg, std::string_view name);

struct PlaceholderValues {
  std::string dataset, task, trial, params_file, workdir;
};

/// `arg` with every placeholder replaced by its value.
std::string expand_placeholders(std::string_view arg, const PlaceholderValues& values);

/// What an objective reported: `{"objective": x, "steps": [..], "metrics": {..}}`, or with
/// several objectives `{"auc": x, "train_s": y, "metrics": {..}}`.
struct ObjectiveResult {
  double objective = 0.0;     ///< the (primary) objective's value
  std::vector<double> values;  ///< with several objectives, each one's, in the job's order
  std::vector<double> steps;  ///< optional per-step values (stepwise objectives)
  std::string metrics_json;   ///< the "metrics" object as JSON text, "{}" when absent
};

/// A parsed result, or why the text is not one (`error` then says so; never throws).
struct ParsedResult {
  std::optional<ObjectiveResult> result;
  std::string error;
};

/// Parses one JSON object per the protocol. NaN or infinite values are errors. `names`: the
/// objectives of a job with several ([objective] objectives), each a key of the result whose
/// value it must give; any other key but "steps" and "metrics" is then an error. Empty: the
/// single "objective".
ParsedResult parse_objective_result(std::string_view text, const std::vector<std::string>& names = {});

/// An intermediate report: while it runs, an objective prints a line
/// `lbo:report {"step": 3, "value": 0.81, "metrics": {...}}` on stdout (flushed). The prefix
/// keeps it from ever being taken for the final result (the last line that is a JSON object).
inline constexpr std::string_view kReportPrefix = "lbo:report ";

/// What one report line says. `step`: how far the trial has come, in the job's unit of
/// resource (epochs, boosting rounds), a positive integer.
struct ObjectiveReport {
  std::int64_t step = 0;
  double value = 0.0;
  std::string metrics_json = "{}";  ///< the "metrics" object as JSON text
};

struct ParsedReport {
  std::optional<ObjectiveReport> report;
  std::string error;  ///< why the line is not a report ("\"step\" is not a positive integer")
};

/// Parses the JSON after kReportPrefix. Never throws.
ParsedReport parse_report(std::string_view json_text);

/// Whether a line of output is a candidate result: after trimming blanks, it starts with '{'
/// and ends with '}'.
bool looks_like_json_object(std::string_view line);

}  // namespace lbo::jobs
