#pragma once
// CSV text as records with the line each starts on, for tables a user hands lbo (an objective's
// tabulated evaluations, earlier evaluations to warm-start from) and for the files lbo writes
// and reads back. RFC 4180: fields separated by commas, quoted with "..." ("" for a quote,
// commas and line breaks inside), LF or CRLF line ends, a UTF-8 byte order mark at the start
// skipped. Written here because Debian packages
// no C++ CSV reader and a reader that keeps line numbers for errors is short.

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lbo::jobs {

struct CsvRecord {
  std::size_t line = 0;  ///< 1-based line of the file where the record starts
  std::vector<std::string> fields;
};

struct CsvTable {
  std::vector<std::string> header;  ///< the first record; empty for an empty text
  std::vector<CsvRecord> records;   ///< the others, blank lines left out
  /// The line of a quote that the text never closes (the rest of the text then is its last
  /// field), or 0.
  std::size_t unclosed_quote_line = 0;

  /// The index of the header's column `name`, or -1.
  int column(std::string_view name) const;
  /// Record `r`'s field in column `c` (-1 or past its end: empty).
  std::string_view field(const CsvRecord& r, int c) const;
};

CsvTable parse_csv(std::string_view text);

/// A cell as a finite number (blanks around it allowed), or nothing (NaN and infinities too).
std::optional<double> parse_number(std::string_view cell);

/// What a row that does not fit the space can do, after its problem.
inline constexpr std::string_view kRowFix = "; fix the row or widen the space, or leave the row out";

/// The problems of a file's rows, said together: up to five "FILE:LINE: what" lines, then how
/// many more.
class CsvProblems {
 public:
  explicit CsvProblems(std::string file) : file_(std::move(file)) {}
  void add(std::size_t line, const std::string& what);
  std::size_t count() const { return count_; }
  /// "\n  FILE:LINE: what" for each of the first five, and "\n  ... and N more".
  std::string lines() const;

 private:
  std::string file_, lines_;
  std::size_t count_ = 0;
};
/// The file at `path`; throws InputError "PATH: cannot read it: <reason>", or "PATH:LINE: a quote
/// opened here is never closed ..." (a user's table: its later rows would vanish into a field).
CsvTable read_csv_file(const std::filesystem::path& path);

}  // namespace lbo::jobs
