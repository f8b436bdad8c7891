// Errors raised inside the library. Apps map ErrorKind to exit codes at the edge:
// Usage -> 2, Runtime -> 1, Verification/Check -> 3. The library never exits.
#pragma once

#include <stdexcept>
#include <string>

namespace gdsb {

enum class ErrorKind { Usage, Runtime, Verification };

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

class UsageError : public Error {
 public:
  explicit UsageError(const std::string& message) : Error(ErrorKind::Usage, message) {}
};

class RuntimeError : public Error {
 public:
  explicit RuntimeError(const std::string& message) : Error(ErrorKind::Runtime, message) {}
};

class VerificationError : public Error {
 public:
  explicit VerificationError(const std::string& message)
      : Error(ErrorKind::Verification, message) {}
};

// Exit codes shared by every gdsbench app (documented in README).
inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntime = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitCheckFailed = 3;
inline constexpr int kExitInterrupted = 130;

inline int exit_code_for(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::Usage: return kExitUsage;
    case ErrorKind::Runtime: return kExitRuntime;
    case ErrorKind::Verification: return kExitCheckFailed;
  }
  return kExitRuntime;
}

}  // namespace gdsb
