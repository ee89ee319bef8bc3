#pragma once
// A CSV file lbo wrote (tasks.csv, hedge.csv) read back as rows keyed by the header
// (jobs::parse_csv: RFC 4180 quoting, as csv_field() writes it).

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lbo::report {

using CsvRow = std::map<std::string, std::string, std::less<>>;

/// The rows of `text`; a row shorter than the header lacks the missing keys (a file cut short
/// by a crash ends in such a row).
std::vector<CsvRow> parse_csv(std::string_view text);

/// The rows of the file at `path`; nothing when it does not exist or cannot be read.
std::optional<std::vector<CsvRow>> read_csv_file(const std::filesystem::path& path);

}  // namespace lbo::report
