// An llvm::Error that carries a source range, so a stage after the front end can report a problem in
// the user's program as `file:line:col: error: ...` through the driver's SourceMgr.
#pragma once

#include "llvm/Support/Error.h"
#include "llvm/Support/SMLoc.h"

#include <string>

namespace polyc {

class SourceError : public llvm::ErrorInfo<SourceError> {
public:
  static inline char ID = 0;
  SourceError(llvm::SMRange range, std::string message) : range(range), message(std::move(message)) {}
  void log(llvm::raw_ostream &os) const override { os << message; }
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }

  llvm::SMRange range; // may be invalid when the construct has no source (models built in tests)
  std::string message;
};

inline llvm::Error makeSourceError(llvm::SMRange range, const llvm::Twine &message) {
  return llvm::make_error<SourceError>(range, message.str());
}

inline llvm::Error makeError(const llvm::Twine &message) {
  return llvm::make_error<llvm::StringError>(message, llvm::inconvertibleErrorCode());
}

} // namespace polyc
