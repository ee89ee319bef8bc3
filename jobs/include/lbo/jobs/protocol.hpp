#pragma once
// The objective protocol: how a command line is expanded for one trial and how its result
// is read back (README, "Objective protocol").

#include <array>
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

/// What an objective reported: `{"objective": x, "steps": [..], "metrics": {..}}`.
struct ObjectiveResult {
  double objective = 0.0;
  std::vector<double> steps;  ///< optional per-step values (stepwise objectives)
  std::string metrics_json;   ///< the "metrics" object as JSON text, "{}" when absent
};

/// A parsed result, or why the text is not one (`error` then says so; never throws).
struct ParsedResult {
  std::optional<ObjectiveResult> result;
  std::string error;
};

/// Parses one JSON object per the protocol. NaN or infinite values are errors.
ParsedResult parse_objective_result(std::string_view text);

/// Whether a line of output is a candidate result: after trimming blanks, it starts with '{'
/// and ends with '}'.
bool looks_like_json_object(std::string_view line);

}  // namespace lbo::jobs
