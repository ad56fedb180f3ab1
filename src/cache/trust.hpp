/** \file
 * Whose files the cache believes. A cubin is code this process will run: the cache reads a
 * directory or an entry only when it is owned by this process's user or by root and others may
 * not write it, as ccache and sccache do. Anything else is what another user of the machine
 * chose, and is compiled around, never loaded (docs/cache.md, "Threat model").
 */
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>

namespace cutejit::detail {

/// Why a file or directory with this owner and mode is not to be trusted; empty when it is.
/// E.g. "owned by uid 1000, not by you (uid 0) or root".
std::string distrust(uid_t owner, mode_t mode);

/// The same for the directory at `path` (links followed: it is where the cache reads), as a
/// sentence naming it; empty when it is trusted or does not exist (a missing directory is
/// created by the next store, as this user's).
std::string distrust_directory(const std::filesystem::path& path);

}  // namespace cutejit::detail
