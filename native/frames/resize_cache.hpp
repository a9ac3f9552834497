// One INTER_AREA resize per source height for a whole engine: ROMs differ in screen height (most
// 210 rows, some 214 to 250), and an engine may mix them (a multi-game batch).
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "config.hpp"
#include "frames/frame_ops.hpp"

namespace sb3ale {

/// The resizes of kScreenWidth-wide screens to one observation size, built on first use of a
/// height. Safe to use from many threads; a resize it returns lives as long as the cache.
class ResizeCache {
 public:
  ResizeCache(int dst_h, int dst_w, int channels) : dst_h_(dst_h), dst_w_(dst_w), channels_(channels) {}

  const AreaResize& get(int src_h) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& resize = resizes_[src_h];
    if (!resize) resize = std::make_unique<const AreaResize>(src_h, kScreenWidth, dst_h_, dst_w_, channels_);
    return *resize;
  }

 private:
  const int dst_h_, dst_w_, channels_;
  std::mutex mutex_;
  std::map<int, std::unique_ptr<const AreaResize>> resizes_;
};

}  // namespace sb3ale
