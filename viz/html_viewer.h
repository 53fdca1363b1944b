// The interactive viewer of a rollout record: one self-contained HTML file (three.js from
// Debian's libjs-three and the record inlined) that opens in any browser, offline: play/pause,
// scrub, playback speed, a follow or orbit camera (drag to turn, wheel to zoom), every recorded
// env side by side. The page also reads its URL fragment, e.g. page.html#t=2.5&paused=1&camera=
// orbit&speed=2, which is how the tests take screenshots at chosen times.
#pragma once

#include <string>

namespace diffloco::viz {

// Path of three.min.js: $DIFFLOCO_THREE_JS, else Debian's libjs-three location.
std::string threeJsPath();

// The page for a record made by rolloutJson(). Throws naming the file if three.js is missing.
std::string viewerHtml(const std::string& rolloutJson, const std::string& title);

}  // namespace diffloco::viz
