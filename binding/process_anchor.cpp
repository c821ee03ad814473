#include "process_anchor.h"

namespace parklock::binding {

bool claim_process() noexcept {
  // Decided once per copy: the answer cannot change, since the first copy stays first.
  static const bool mine = claim_this_copy();
  return mine;
}

}  // namespace parklock::binding
