#pragma once
// Reading a job file (private to jobs/): the TOML tree, typed values with the place of every
// problem ("job.toml:14:9: space.lr: ..."), and every problem collected so that a user fixes a
// job file in one edit. One section parser per TOML table reads through it (sections.hpp).

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <toml++/toml.h>

namespace lbo::jobs::job_file {

std::string in_quotes(std::string_view s);
std::string join_quoted(const std::vector<std::string>& items);
/// "a string", "an integer", ...: what a user wrote, in an error message.
std::string_view type_name(const toml::node& node);
/// A number as the user would write it back: "2.0", not "2".
std::string format_number(double v);
/// Whether `file` can be run: an executable regular file.
bool is_executable_file(const std::filesystem::path& file);
/// The executable file a bare program name runs, as posix_spawnp finds it on PATH.
std::optional<std::filesystem::path> find_on_path(const std::string& program);

/// What a budget must be (kMaxBudget), said of task budgets and the default budget alike.
inline constexpr std::string_view kBudgetRule = "must be between 1 and 100000000";

/// Whether a range of seconds includes its lower end, 0.
enum class Bound : std::uint8_t { inclusive, exclusive };

class Reader {
 public:
  Reader(const std::filesystem::path& path, std::string_view text);

  const std::filesystem::path& path() const { return path_; }
  std::string_view text() const { return text_; }
  const std::vector<std::string>& errors() const { return errors_; }

  /// "job.toml:14:9: key", the start of every message about `key` at `where`.
  std::string place(const toml::source_region& where, std::string_view key) const;
  void error(const toml::source_region& where, std::string_view key, std::string_view what);
  void error(const toml::node& where, std::string_view key, std::string_view what) { error(where.source(), key, what); }
  static std::string key_path(std::string_view prefix, std::string_view key);

  /// Reports every key of `table` not in `allowed`, with the nearest allowed one.
  void check_keys(const toml::table& table, std::string_view prefix, std::initializer_list<std::string_view> allowed);
  const toml::table* optional_table(const toml::table& parent, std::string_view key, std::string_view prefix);
  const toml::table* require_table(const toml::table& parent, std::string_view key, std::string_view prefix);

  /// A typed value: nullopt when absent (and reported when `required`) or of the wrong type.
  template <class T>
  std::optional<T> get(const toml::table& table, std::string_view key, std::string_view prefix, bool required,
                       std::string_view expected) {
    const toml::node* node = table.get(key);
    if (node == nullptr) {
      if (required) error(table.source(), key_path(prefix, key), "missing; add it");
      return std::nullopt;
    }
    if constexpr (std::is_same_v<T, double>) {
      if (node->is_integer()) return static_cast<double>(node->as_integer()->get());
    }
    if (const auto value = node->value_exact<T>()) return value;
    error(*node, key_path(prefix, key), "must be " + std::string(expected) + ", not " + std::string(type_name(*node)));
    return std::nullopt;
  }
  std::optional<std::string> get_string(const toml::table& t, std::string_view key, std::string_view prefix, bool required) {
    return get<std::string>(t, key, prefix, required, "a string");
  }
  std::optional<std::int64_t> get_int(const toml::table& t, std::string_view key, std::string_view prefix, bool required) {
    return get<std::int64_t>(t, key, prefix, required, "an integer");
  }
  std::optional<double> get_number(const toml::table& t, std::string_view key, std::string_view prefix, bool required) {
    return get<double>(t, key, prefix, required, "a number");
  }
  std::optional<bool> get_bool(const toml::table& t, std::string_view key, std::string_view prefix) {
    return get<bool>(t, key, prefix, false, "true or false");
  }
  /// An integer in [low, high], reported with `rule` otherwise.
  std::optional<int> get_int_in(const toml::table& t, std::string_view key, std::string_view prefix, bool required,
                                std::int64_t low, std::int64_t high, std::string_view rule);
  /// A number of seconds in [0, kMaxSeconds] (0 left out when `zero` is exclusive), reported
  /// otherwise: longer ones overflow the timers' nanoseconds.
  std::optional<double> get_seconds(const toml::table& t, std::string_view key, std::string_view prefix, Bound zero,
                                    std::string_view hint = "");
  /// A number > 0 into `out`; false when absent or reported.
  bool positive(const toml::table& t, std::string_view prefix, std::string_view key, double& out);

  /// Relative paths resolve against the job file's folder.
  std::filesystem::path resolve(const std::string& path) const;

 private:
  std::filesystem::path path_;
  std::string_view text_;
  std::filesystem::path base_dir_;
  std::vector<std::string> errors_;
};

}  // namespace lbo::jobs::job_file
