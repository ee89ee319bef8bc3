#pragma once
// The search space: typed parameters with bounds, log scale, choices and `when` conditions.

#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace lbo::jobs {

enum class ParamType : std::uint8_t { real, integer, categorical };

/// The job file's spelling of a type: "float", "int", "categorical".
std::string_view to_string(ParamType type);

/// A parameter is active only while `parent` is active and holds one of `choices`.
struct Condition {
  int parent = 0;            ///< index of a categorical parameter of the space
  std::vector<int> choices;  ///< indices into the parent's choices
};

/// Int parameters hold their bounds and values in doubles (ParamSpec, Config::values), which
/// are exact for integers up to 2^53 in magnitude: bounds lie within ±kMaxIntBound.
inline constexpr std::int64_t kMaxIntBound = std::int64_t{1} << 53;

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::real;
  double low = 0.0;  ///< real and integer: inclusive bounds, low < high (integer: within ±kMaxIntBound)
  double high = 1.0;
  bool log = false;                  ///< sample and encode in log space (low > 0)
  std::vector<std::string> choices;  ///< categorical only, non-empty
  std::vector<Condition> when;       ///< all must hold for the parameter to be active
};

/// One configuration: a value per parameter, in space order; an inactive parameter holds
/// nullopt. Reals hold their value, integers an integral value, categoricals the index of
/// their choice.
struct Config {
  std::vector<std::optional<double>> values;

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t /*version*/) {
    archive(values);
  }
  friend bool operator==(const Config&, const Config&) = default;
};

class Space {
 public:
  Space() = default;
  /// Checks the invariants the job parser has already reported on (bounds, choices, conditions
  /// naming earlier-validated parents, no cycles); throws std::invalid_argument otherwise.
  explicit Space(std::vector<ParamSpec> params);

  const std::vector<ParamSpec>& params() const { return params_; }
  int size() const { return static_cast<int>(params_.size()); }
  /// Index of the parameter called `name`, or -1.
  int index_of(std::string_view name) const;
  /// Parameter indices ordered so that every parent comes before its dependants.
  const std::vector<int>& evaluation_order() const { return order_; }

  /// Whether parameter `param` is active in `config`, given its parents' values there.
  bool is_active(int param, const Config& config) const;
  /// A uniform draw (log-uniform for log parameters) that respects every `when` condition.
  Config sample(std::mt19937_64& rng) const;
  /// The next point of a design that already holds `design`: a draw as sample(), except that
  /// every active categorical takes one of its choices least used among the configurations of
  /// `design` where it is active (uniformly among those). Draws made one after the other so
  /// cover min(k, choices) of a categorical's choices in k draws, as a Latin hypercube covers
  /// a range; 5 independent draws leave some family of a 4-way model choice untried 3 times
  /// in 4.
  Config sample_balanced(std::mt19937_64& rng, const std::vector<Config>& design) const;
  /// Whether `config` has a valid value for exactly its active parameters.
  bool is_valid(const Config& config) const;

  /// The active parameters as a JSON object (params.json): int as integer, float as number,
  /// categorical as its choice string.
  std::string to_json(const Config& config) const;
  /// A value as text for tables: shortest round-trip form for reals, the choice for categoricals.
  std::string format_value(int param, double value) const;
  /// The inverse of format_value for a table cell someone else may have written: a number
  /// within the bounds (integers integral; a value past a bound by rounding, 1e-9 of the
  /// range, taken as the bound) or a choice's name. Nothing, with `why` set ("0.9 is above
  /// high = 0.5"), when `text` is none.
  std::optional<double> parse_value(int param, std::string_view text, std::string& why) const;
  /// The configuration whose parameter `p` is written `cell(p)`: the active parameters'
  /// values parsed (parents first), an inactive parameter's cell not read. Nothing, with `why`
  /// set ("lr: 0.9 is above high = 0.5"), when a cell of an active parameter is empty or
  /// holds no value.
  std::optional<Config> parse_config(const std::function<std::string_view(int)>& cell, std::string& why) const;
  /// The configuration params.json (to_json) holds; throws std::invalid_argument otherwise.
  Config from_json(std::string_view json) const;

 private:
  std::vector<ParamSpec> params_;
  std::vector<int> order_;
};

/// A seed for one trial's random stream, mixed from the run seed and the trial id (SplitMix64),
/// so a trial's random draws do not depend on the order in which trials were created.
std::uint64_t trial_seed(std::uint64_t run_seed, std::int64_t trial_id);

}  // namespace lbo::jobs
