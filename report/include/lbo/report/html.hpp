#pragma once
// report.html: one self-contained page (the chart library, the report script and the runs'
// data inline; nothing fetched when it is viewed).

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace lbo::report {

/// The page for the runs in `dirs` (one, or several side by side). `ended_with`: as
/// run_data()'s, for dirs.front(). Throws as run_data().
std::string report_html(const std::vector<std::filesystem::path>& dirs, std::optional<int> ended_with = std::nullopt);

/// Writes report_html(dirs, ended_with) to `out` atomically (a reader never sees half a page).
/// Throws as run_data(), and IoError naming `out`.
void write_report(const std::vector<std::filesystem::path>& dirs, const std::filesystem::path& out,
                  std::optional<int> ended_with = std::nullopt);

}  // namespace lbo::report
