#pragma once
// Writing lbo's own files: the one atomic replacement of a file (a temporary file beside it,
// then a rename), durable when it matters. Every failure is an IoError naming the path.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace lbo::orchestrator {

enum class Durability : std::uint8_t {
  cached,  ///< atomic for readers; may be lost with the machine (reports that are rewritten anyway)
  synced,  ///< survives a machine crash: the file and its folder are fsynced (state, the frozen job)
};

/// Replaces `path` by `bytes`: a reader sees the old file or the new one, never a part of either.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes, Durability durability);

/// fsync of a folder, so a file created or renamed in it survives a machine crash.
void sync_directory(const std::filesystem::path& dir);

/// What `path` is when it exists but is not a regular file ("a folder", "a FIFO", ...), or
/// empty: lbo reads only regular files of a run directory (a FIFO would block a read for ever,
/// a folder would read as garbage).
std::string not_a_regular_file(const std::filesystem::path& path);
/// Copies `from` to a new file `to`, synced (a damaged file kept aside before a repair).
void copy_file_synced(const std::filesystem::path& from, const std::filesystem::path& to);

}  // namespace lbo::orchestrator
