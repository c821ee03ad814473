// Which Node `threadId` each parklock ThreadId belongs to, for errors that name a thread (an
// owner that ended while holding a lock). Process-wide; an entry is never removed, since ended
// threads are exactly the ones reported (a few bytes per thread the process ever ran).
#pragma once

#include <optional>

#include "lot/thread_id.h"

namespace parklock::binding {

void remember_node_thread_id(ThreadId thread, double node_thread_id);

// Nothing for a thread that never loaded the addon in a Node environment (a plain C++ thread).
std::optional<double> node_thread_id_of(ThreadId thread);

}  // namespace parklock::binding
