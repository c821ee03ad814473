// A region other processes could share (shared_region.h), in a temporary file of this process:
// for the C++ tests of regions and of the relay. Linux only, where regions exist.
#pragma once

#if defined(__linux__)
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "shared_region.h"

namespace parklock::testing {

// A fresh region of `size` bytes, its file removed and its use given back at the end of the test
// (the mapping goes once nothing else uses it: a relay that still watches a word there keeps it).
struct TemporaryRegion {
  std::string path;
  shared_region::Opened opened;

  explicit TemporaryRegion(std::uint64_t size = 64) {
    char name[] = "/tmp/parklock-region-test-XXXXXX";
    const int fd = mkstemp(name);
    path = name;
    // mkstemp made an empty file, which adopt() repairs into a region as a creator that died
    // would have left it.
    opened = shared_region::adopt(fd, /*may_repair=*/true, size);
    close(fd);
  }
  ~TemporaryRegion() {
    unlink(path.c_str());
    if (opened.region != nullptr) shared_region::release(opened.region);
  }
  TemporaryRegion(const TemporaryRegion&) = delete;
  TemporaryRegion& operator=(const TemporaryRegion&) = delete;
};

}  // namespace parklock::testing

#endif
