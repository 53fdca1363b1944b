#include "viz/html_viewer.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace diffloco::viz {

namespace {

// The page around the three.js source and the record. Kept as one string so the binary needs no
// data files besides three.js itself.
const char* kPageHead = R"html(<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>@TITLE@</title>
<style>
 html,body{margin:0;height:100%;overflow:hidden;font:13px sans-serif;background:#bed7f0}
 #view{position:absolute;inset:0 0 44px 0}
 #overlay{position:absolute;left:8px;top:8px;padding:6px 8px;background:rgba(0,0,0,.45);
   color:#fff;font:12px monospace;white-space:pre;pointer-events:none}
 #bar{position:absolute;left:0;right:0;bottom:0;height:44px;display:flex;gap:8px;
   align-items:center;padding:0 8px;background:#222;color:#eee}
 #scrub{flex:1}
</style></head><body>
<div id="view"></div><div id="overlay"></div>
<div id="bar"><button id="play">pause</button><input id="scrub" type="range" min="0" value="0">
<span id="clock">0.00 s</span>
<label>speed <select id="speed"><option>0.25</option><option>0.5</option>
<option selected>1</option><option>2</option><option>4</option></select></label>
<label>camera <select id="camera"><option>follow</option><option>orbit</option></select></label>
</div>
<script>
)html";

const char* kPageScript = R"js(
// The viewer: bodies as groups whose poses come from the record, one robot per env (side by side
// on the plane; on a height field where they are, each on its own ground).
(function () {
  const rec = JSON.parse(document.getElementById('rollout').textContent);
  if (rec.format !== 'diffloco-rollout-1' && rec.format !== 'diffloco-rollout-2')
    throw new Error('unknown rollout record format ' + rec.format);
  const nb = rec.bodies.length, spacing = rec.terrain ? 0 : 1.2;
  const params = new URLSearchParams(location.hash.slice(1));
  const view = document.getElementById('view');
  const renderer = new THREE.WebGLRenderer({antialias: true, preserveDrawingBuffer: true});
  renderer.setPixelRatio(window.devicePixelRatio || 1);
  view.appendChild(renderer.domElement);
  const scene = new THREE.Scene();
  scene.background = new THREE.Color(0xbed7f0);
  scene.fog = new THREE.Fog(0xbed7f0, 8, 30);
  const camera = new THREE.PerspectiveCamera(40, 1, 0.05, 100);
  camera.up.set(0, 0, 1);
  scene.add(new THREE.AmbientLight(0xffffff, 0.45));
  const sun = new THREE.DirectionalLight(0xffffff, 0.7);
  sun.position.set(0.4, -0.5, 0.8);
  scene.add(sun);

  // The ground: the plane z = 0, a checker of 0.5 m squares as in the videos, and where the
  // rollout ran on a height field (rec.terrain, format 2) its window as flat triangles through the
  // samples with the same checker, the plane cut away under it and skirts down to it at its edges.
  const tr = rec.terrain;
  const c = document.createElement('canvas');
  c.width = c.height = 2;
  const g = c.getContext('2d');
  g.fillStyle = '#cdcdc8'; g.fillRect(0, 0, 2, 2);
  g.fillStyle = '#a0a09e'; g.fillRect(0, 0, 1, 1); g.fillRect(1, 1, 1, 1);
  const tex = new THREE.CanvasTexture(c);
  tex.magFilter = THREE.NearestFilter;
  tex.wrapS = tex.wrapT = THREE.RepeatWrapping;  // a shape's uv is its world (x, y): 1 repeat per m
  const start = rec.envs[0].pose.length ? rec.envs[0].pose : [0, 0];
  const cx = Math.round(start[0]), cy = Math.round(start[1]);
  const rect = (path, x0, y0, x1, y1) => {
    path.moveTo(x0, y0); path.lineTo(x1, y0); path.lineTo(x1, y1); path.lineTo(x0, y1); path.lineTo(x0, y0);
    return path;
  };
  const plane = rect(new THREE.Shape(), cx - 50, cy - 50, cx + 50, cy + 50);
  if (tr) {
    plane.holes.push(rect(new THREE.Path(), tr.origin[0], tr.origin[1],
                          tr.origin[0] + (tr.nx - 1) * tr.spacing, tr.origin[1] + (tr.ny - 1) * tr.spacing));
  }
  scene.add(new THREE.Mesh(new THREE.ShapeBufferGeometry(plane), new THREE.MeshLambertMaterial({map: tex})));
  if (tr) scene.add(terrainMesh(tr));

  function terrainMesh(tr) {
    const nx = tr.nx, ny = tr.ny, s = tr.spacing, h = tr.heights;
    const light = [0xcd / 255, 0xcd / 255, 0xc8 / 255], dark = [0xa0 / 255, 0xa0 / 255, 0x9e / 255];
    const pos = new Float32Array(18 * ((nx - 1) * (ny - 1) + 2 * (nx + ny)));
    const col = new Float32Array(pos.length);
    let n = 0;
    const vx = (ix, iy) => [tr.origin[0] + ix * s, tr.origin[1] + iy * s, h[iy * nx + ix]];
    const tri = (a, b, d, rgb) => {
      for (const v of [a, b, d]) { pos.set(v, n); col.set(rgb, n); n += 3; }
    };
    for (let iy = 0; iy + 1 < ny; ++iy) {
      for (let ix = 0; ix + 1 < nx; ++ix) {
        const a = vx(ix, iy), b = vx(ix + 1, iy), e = vx(ix, iy + 1), d = vx(ix + 1, iy + 1);
        const odd = (Math.floor((a[0] + 0.5 * s) / 0.5) + Math.floor((a[1] + 0.5 * s) / 0.5)) & 1;
        const rgb = odd ? dark : light;
        tri(a, b, d, rgb); tri(a, d, e, rgb);
      }
    }
    const skirt = (ix, iy, dx, dy, count) => {
      for (let k = 0; k + 1 < count; ++k) {
        const a = vx(ix + k * dx, iy + k * dy), b = vx(ix + (k + 1) * dx, iy + (k + 1) * dy);
        if (a[2] === 0 && b[2] === 0) continue;
        const a0 = [a[0], a[1], 0], b0 = [b[0], b[1], 0];
        tri(a, b, b0, dark); tri(a, b0, a0, dark);
      }
    };
    skirt(0, 0, 1, 0, nx); skirt(0, ny - 1, 1, 0, nx); skirt(0, 0, 0, 1, ny); skirt(nx - 1, 0, 0, 1, ny);
    const geo = new THREE.BufferGeometry();
    geo.setAttribute('position', new THREE.BufferAttribute(pos.subarray(0, n), 3));
    geo.setAttribute('color', new THREE.BufferAttribute(col.subarray(0, n), 3));
    geo.computeVertexNormals();  // not indexed: each triangle's own normal (flat, steps stay sharp)
    return new THREE.Mesh(geo, new THREE.MeshLambertMaterial(
        {vertexColors: THREE.VertexColors, side: THREE.DoubleSide}));
  }
  // Height of the drawn ground under (x, y): bilinear between samples, 0 outside the window.
  function groundAt(x, y) {
    if (!tr) return 0;
    const u = (x - tr.origin[0]) / tr.spacing, v = (y - tr.origin[1]) / tr.spacing;
    if (!(u >= 0 && v >= 0 && u <= tr.nx - 1 && v <= tr.ny - 1)) return 0;
    const i = Math.min(tr.nx - 2, Math.floor(u)), j = Math.min(tr.ny - 2, Math.floor(v));
    const fu = u - i, fv = v - j, at = (a, b) => tr.heights[b * tr.nx + a];
    return (1 - fv) * ((1 - fu) * at(i, j) + fu * at(i + 1, j)) + fv * ((1 - fu) * at(i, j + 1) + fu * at(i + 1, j + 1));
  }
  // Where the camera looks: the ground's mean height over 2 m around a point (steps do not jolt it).
  function groundAround(x, y) {
    let sum = 0;
    for (let i = -2; i <= 2; ++i) for (let j = -2; j <= 2; ++j) sum += groundAt(x + 0.5 * i, y + 0.5 * j);
    return sum / 25;
  }

  const v3 = (a) => new THREE.Vector3(a[0], a[1], a[2]);
  function shapeMesh(s) {
    const mat = new THREE.MeshLambertMaterial(
        {color: new THREE.Color(s.color[0] / 255, s.color[1] / 255, s.color[2] / 255)});
    const group = new THREE.Group();
    if (s.kind === 'box') {
      const m = new THREE.Mesh(new THREE.BoxBufferGeometry(2 * s.b[0], 2 * s.b[1], 2 * s.b[2]), mat);
      m.position.copy(v3(s.a));
      group.add(m);
      return group;
    }
    const ends = s.kind === 'capsule' ? [s.a, s.b] : [s.a];
    for (const e of ends) {
      const m = new THREE.Mesh(new THREE.SphereBufferGeometry(s.radius, 16, 10), mat);
      m.position.copy(v3(e));
      group.add(m);
    }
    if (s.kind === 'capsule') {
      const a = v3(s.a), b = v3(s.b), d = b.clone().sub(a), len = d.length();
      if (len > 1e-6) {
        const m = new THREE.Mesh(new THREE.CylinderBufferGeometry(s.radius, s.radius, len, 16), mat);
        m.position.copy(a.clone().add(b).multiplyScalar(0.5));
        m.quaternion.setFromUnitVectors(new THREE.Vector3(0, 1, 0), d.normalize());
        group.add(m);
      }
    }
    return group;
  }
  const robots = rec.envs.map(() => {
    const bodies = [];
    for (let b = 0; b < nb; ++b) { const gr = new THREE.Group(); scene.add(gr); bodies.push(gr); }
    for (const s of rec.shapes) bodies[s.body].add(shapeMesh(s));
    return bodies;
  });
  const frames = Math.max(...rec.envs.map((e) => e.frames));
  const duration = frames * rec.dt;

  const ui = (id) => document.getElementById(id);
  const scrub = ui('scrub');
  scrub.max = frames - 1;
  let time = Math.min(parseFloat(params.get('t') || '0'), duration), playing = params.get('paused') !== '1';
  let speed = parseFloat(params.get('speed') || '1');
  if (params.get('speed')) ui('speed').value = params.get('speed');
  if (params.get('camera')) ui('camera').value = params.get('camera');
  ui('play').textContent = playing ? 'pause' : 'play';
  ui('play').onclick = () => { playing = !playing; ui('play').textContent = playing ? 'pause' : 'play'; };
  ui('speed').onchange = () => { speed = parseFloat(ui('speed').value); };
  scrub.oninput = () => { time = scrub.value * rec.dt; };
  window.addEventListener('keydown', (e) => { if (e.key === ' ') ui('play').onclick(); });

  // Camera: spherical coordinates around a target that follows env 0's base (follow) or stays
  // where the robots started (orbit). Drag turns, wheel zooms.
  let azimuth = -1.24, elevation = 0.37, distance = 3.4 + 0.3 * (rec.envs.length - 1);
  let drag = null;
  view.onpointerdown = (e) => { drag = [e.clientX, e.clientY]; };
  window.onpointerup = () => { drag = null; };
  window.onpointermove = (e) => {
    if (!drag) return;
    azimuth -= (e.clientX - drag[0]) * 0.01;
    elevation = Math.min(1.5, Math.max(0.02, elevation + (e.clientY - drag[1]) * 0.01));
    drag = [e.clientX, e.clientY];
  };
  view.onwheel = (e) => { distance = Math.min(40, Math.max(0.5, distance * (e.deltaY > 0 ? 1.1 : 0.9))); };

  const stateIndex = (env, t) => Math.max(0, Math.min(rec.envs[env].frames - 1, Math.round(t / rec.dt)));
  const middle = 0.5 * (rec.envs.length - 1) * spacing;
  const fmt = (x) => (x >= 0 ? ' ' : '') + x.toFixed(2);
  function show(t) {
    rec.envs.forEach((env, e) => {
      const k = stateIndex(e, t);
      for (let b = 0; b < nb; ++b) {
        const p = env.pose.slice((k * nb + b) * 7, (k * nb + b) * 7 + 7);
        robots[e][b].position.set(p[0], p[1] + e * spacing, p[2]);
        robots[e][b].quaternion.set(p[4], p[5], p[6], p[3]);
      }
    });
    const follow = ui('camera').value === 'follow';
    const base = rec.envs[0].pose.slice(stateIndex(0, follow ? t : 0) * nb * 7);
    const target = new THREE.Vector3(base[0], base[1] + middle, 0.3 + groundAround(base[0], base[1]));
    camera.position.set(target.x + distance * Math.cos(elevation) * Math.cos(azimuth),
                        target.y + distance * Math.cos(elevation) * Math.sin(azimuth),
                        target.z + distance * Math.sin(elevation));
    camera.lookAt(target);
    const k = stateIndex(0, t), env = rec.envs[0];
    const cmd = env.command.slice(3 * k, 3 * k + 3), vel = env.velocity.slice(3 * k, 3 * k + 3);
    ui('overlay').textContent = 't ' + t.toFixed(2) + ' s' + (rec.envs.length > 1 ? '  (env 0 of ' + rec.envs.length + ')' : '') +
        '\ncmd ' + (rec.has_commands ? 'vx' + fmt(cmd[0]) + ' vy' + fmt(cmd[1]) + ' wz' + fmt(cmd[2]) : 'none') +
        '\nvel vx' + fmt(vel[0]) + ' vy' + fmt(vel[1]) + ' wz' + fmt(vel[2]) +
        '\n' + rec.policy + ' (' + rec.engine + ')';
    ui('clock').textContent = t.toFixed(2) + ' / ' + duration.toFixed(2) + ' s';
    scrub.value = stateIndex(0, t);
    document.title = 't=' + t.toFixed(3);
    document.body.dataset.time = t.toFixed(3);
  }
  function resize() {
    const w = view.clientWidth, h = view.clientHeight;
    renderer.setSize(w, h);
    camera.aspect = w / Math.max(1, h);
    camera.updateProjectionMatrix();
  }
  window.onresize = resize;
  resize();
  // The clock runs on a timer, drawing on animation frames: a page in the background (or a
  // headless browser on virtual time) keeps its time even when it draws few frames.
  let last = performance.now();
  function advance() {
    const now = performance.now();
    if (playing) time = (time + Math.max(0, now - last) / 1000 * speed) % duration;
    last = now;
    show(time);
  }
  setInterval(advance, 20);
  function draw() {
    advance();
    renderer.render(scene, camera);
    requestAnimationFrame(draw);
  }
  requestAnimationFrame(draw);
})();
</script></body></html>
)js";

std::string readFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    throw std::runtime_error(path +
                             ": three.js not found (install Debian's libjs-three, or set "
                             "DIFFLOCO_THREE_JS to three.min.js)");
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string htmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string threeJsPath() {
  const char* env = std::getenv("DIFFLOCO_THREE_JS");
  return env && *env ? env : "/usr/share/javascript/three/three.min.js";
}

std::string viewerHtml(const std::string& rolloutJson, const std::string& title) {
  std::string head = kPageHead;
  head.replace(head.find("@TITLE@"), 7, htmlEscape(title));
  // The record is JSON with '<' escaped (rollout_record.cpp), so it cannot close the element.
  return head + readFile(threeJsPath()) +
         "\n</script>\n<script type=\"application/json\" id=\"rollout\">" + rolloutJson +
         "</script>\n<script>" + kPageScript;
}

}  // namespace diffloco::viz
