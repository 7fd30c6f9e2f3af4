// Owns the one isl context of a compilation. Declared first in whatever holds isl objects, so that it
// is destroyed last (isl objects must not outlive their context).
#pragma once

#include <isl/ctx.h>
#include <isl/options.h>

#include <memory>

namespace polyc {

class IslContext {
public:
  IslContext() : ctx_(isl_ctx_alloc(), isl_ctx_free) {
    // Errors are reported to the caller (null results), never by aborting the process.
    isl_options_set_on_error(ctx_.get(), ISL_ON_ERROR_CONTINUE);
  }
  isl_ctx *get() const { return ctx_.get(); }

private:
  std::unique_ptr<isl_ctx, decltype(&isl_ctx_free)> ctx_;
};

} // namespace polyc
