// Card art, drawn here as SVG (no image files): six fly colours and the swatter.
// Every colour has its own hue and its own shape (in the corner, as the wing pattern and as
// the value's pips), so a colour-blind player can tell them apart (R2) — with no letter on
// the card: a letter reads right in one language only (G is green in English, yellow is gelb).

/** Colour letter -> hue, shape name and pattern, in the canonical order R Y G B P O. */
export const COLOURS = {
  R: { fill: "#d62839", dark: "#8c1422", shape: "circle" },
  Y: { fill: "#f4c20d", dark: "#8a6b00", shape: "triangle" },
  G: { fill: "#2e9e44", dark: "#17602a", shape: "square" },
  B: { fill: "#1f6fd6", dark: "#0f3f80", shape: "diamond" },
  P: { fill: "#8e44ad", dark: "#552468", shape: "star" },
  O: { fill: "#f07b16", dark: "#99490a", shape: "hexagon" },
};

export const COLOUR_ORDER = ["R", "Y", "G", "B", "P", "O"];

/** Parse a card's text form ("R3-1", "S-4") into {text, colour, value, copy, swatter}. */
export function parseCard(text) {
  const m = /^([RYGBPO])([1-5])-(\d+)$/.exec(text);
  if (m) return { text, colour: m[1], value: Number(m[2]), copy: Number(m[3]), swatter: false };
  const s = /^S-(\d+)$/.exec(text);
  if (s) return { text, colour: null, value: 0, copy: Number(s[1]), swatter: true };
  throw new Error(`not a card: ${text}`);
}

function shapePath(shape, cx, cy, r) {
  const pts = (n, rot, radii) => {
    const out = [];
    for (let i = 0; i < n; i++) {
      const a = rot + (i * 2 * Math.PI) / n;
      const rr = radii ? radii[i % radii.length] : r;
      out.push(`${(cx + rr * Math.cos(a)).toFixed(2)},${(cy + rr * Math.sin(a)).toFixed(2)}`);
    }
    return `M${out.join("L")}Z`;
  };
  switch (shape) {
    case "circle":
      return `M${cx - r},${cy}a${r},${r} 0 1,0 ${2 * r},0a${r},${r} 0 1,0 ${-2 * r},0Z`;
    case "triangle":
      return pts(3, -Math.PI / 2, [r * 1.15]);
    case "square":
      return pts(4, Math.PI / 4, [r * 1.2]);
    case "diamond":
      return pts(4, -Math.PI / 2, [r * 1.25]);
    case "star":
      return pts(10, -Math.PI / 2, [r * 1.25, r * 0.55]);
    case "hexagon":
      return pts(6, 0, [r * 1.1]);
    default:
      return "";
  }
}

/** An SVG path for the colour's shape, centred on (cx, cy) with radius r. */
export function shapeSvg(colour, cx, cy, r, attrs = "") {
  const c = COLOURS[colour];
  return `<path d="${shapePath(c.shape, cx, cy, r)}" ${attrs}/>`;
}

// Each colour's background pattern: a tile of its own shape, so pattern and badge agree.
function patternDef(colour, id, fg, opacity, size = 12) {
  return `<pattern id="${id}" width="${size}" height="${size}" patternUnits="userSpaceOnUse">
    ${shapeSvg(colour, size / 4, size / 4, size / 7, `fill="${fg}" fill-opacity="${opacity}"`)}
    ${shapeSvg(colour, (3 * size) / 4, (3 * size) / 4, size / 7, `fill="${fg}" fill-opacity="${opacity}"`)}
  </pattern>`;
}

let uid = 0;

function flySvg(colour, x, y, s, wingFill) {
  const c = COLOURS[colour];
  // A fly seen from above, head up: two patterned wings, a body, a head with eyes, six legs.
  const legs = [-1, 1]
    .flatMap((side) =>
      [-0.05, 0.12, 0.3].map((dy, i) => {
        const x1 = x + side * 0.1 * s;
        const y1 = y + dy * s;
        const x2 = x + side * 0.36 * s;
        const y2 = y + (dy + (i - 1) * 0.16) * s;
        return `M${x1},${y1}Q${x + side * 0.3 * s},${y1 - 0.02 * s} ${x2},${y2}`;
      }),
    )
    .join("");
  const wing = (side) => {
    const cx = x + side * 0.2 * s;
    const cy = y + 0.02 * s;
    return `<ellipse cx="${cx}" cy="${cy}" rx="${0.26 * s}" ry="${0.12 * s}"
      transform="rotate(${side * 55} ${cx} ${cy})" fill="${wingFill}" stroke="${c.dark}" stroke-width="${0.025 * s}"/>`;
  };
  return `<g class="fly">
    <path d="${legs}" stroke="#222" stroke-width="${0.03 * s}" fill="none" stroke-linecap="round"/>
    ${wing(-1)}${wing(1)}
    <ellipse cx="${x}" cy="${y + 0.14 * s}" rx="${0.13 * s}" ry="${0.25 * s}" fill="${c.fill}"
      stroke="${c.dark}" stroke-width="${0.03 * s}"/>
    <path d="M${x - 0.11 * s},${y + 0.1 * s}H${x + 0.11 * s}M${x - 0.12 * s},${y + 0.2 * s}H${x + 0.12 * s}"
      stroke="${c.dark}" stroke-width="${0.025 * s}"/>
    <circle cx="${x}" cy="${y - 0.15 * s}" r="${0.11 * s}" fill="${c.dark}"/>
    <circle cx="${x - 0.065 * s}" cy="${y - 0.18 * s}" r="${0.05 * s}" fill="#e53935" stroke="#fff" stroke-width="${0.012 * s}"/>
    <circle cx="${x + 0.065 * s}" cy="${y - 0.18 * s}" r="${0.05 * s}" fill="#e53935" stroke="#fff" stroke-width="${0.012 * s}"/>
  </g>`;
}

/** The SVG markup of a fly card's face (viewBox 0 0 100 140). */
export function flyCardSvg(colour, value, title = "") {
  const c = COLOURS[colour];
  const bg = `bg${++uid}`;
  const wing = `wg${uid}`;
  // One small shape per point along the bottom: the value, told a second way.
  const pips = Array.from({ length: value }, (_, i) => {
    const x = 50 + (i - (value - 1) / 2) * 13;
    return shapeSvg(colour, x, 125, 4.2, `fill="#fff" stroke="${c.dark}" stroke-width="1.2"`);
  }).join("");
  return `<svg viewBox="0 0 100 140" xmlns="http://www.w3.org/2000/svg" role="img">
    <title>${title}</title>
    <defs>${patternDef(colour, bg, "#fff", 0.28)}${patternDef(colour, wing, c.dark, 0.5, 8)}</defs>
    <rect x="1.5" y="1.5" width="97" height="137" rx="9" fill="${c.fill}" stroke="${c.dark}" stroke-width="3"/>
    <rect x="1.5" y="1.5" width="97" height="137" rx="9" fill="url(#${bg})"/>
    <ellipse cx="50" cy="72" rx="38" ry="41" fill="#fff" stroke="${c.dark}" stroke-width="2"/>
    ${flySvg(colour, 50, 70, 74, `url(#${wing})`)}
    <text x="6" y="33" font-size="34" font-weight="900" fill="#fff" stroke="${c.dark}" stroke-width="3"
      paint-order="stroke" font-family="system-ui, sans-serif">${value}</text>
    ${shapeSvg(colour, 84, 17, 11, `fill="#fff" stroke="${c.dark}" stroke-width="2"`)}
    ${shapeSvg(colour, 84, 17, 5.5, `fill="${c.fill}" stroke="${c.dark}" stroke-width="1"`)}
    ${pips}
  </svg>`;
}

/** The SVG markup of the flyswatter card (viewBox 0 0 100 140). */
export function swatterCardSvg(title = "") {
  const mesh = [];
  for (let i = 0; i <= 6; i++) {
    mesh.push(`M${28 + i * 7.3},18V62`);
    mesh.push(`M28,${18 + i * 7.3}H72`);
  }
  return `<svg viewBox="0 0 100 140" xmlns="http://www.w3.org/2000/svg" role="img">
    <title>${title}</title>
    <rect x="1.5" y="1.5" width="97" height="137" rx="9" fill="#1d1b2f" stroke="#000" stroke-width="3"/>
    <g stroke="#ffe14d" stroke-width="2.2" fill="none" opacity="0.9">
      <path d="M14,14l8,8M86,14l-8,8M14,126l8,-8M86,126l-8,-8"/>
    </g>
    <g transform="rotate(-18 50 70)">
      <rect x="24" y="14" width="52" height="52" rx="8" fill="#ff3d7f" stroke="#fff" stroke-width="3"/>
      <path d="${mesh.join("")}" stroke="#fff" stroke-opacity="0.5" stroke-width="1.3"/>
      <path d="M50,66V124" stroke="#fff" stroke-width="7" stroke-linecap="round"/>
      <path d="M50,66V124" stroke="#ff3d7f" stroke-width="3" stroke-linecap="round"/>
    </g>
  </svg>`;
}

/** The face-down back of a card (for draw piles). */
export function backSvg() {
  return `<svg viewBox="0 0 100 140" xmlns="http://www.w3.org/2000/svg" aria-hidden="true">
    <rect x="1.5" y="1.5" width="97" height="137" rx="9" fill="#2d4a3e" stroke="#15261f" stroke-width="3"/>
    <rect x="9" y="9" width="82" height="122" rx="6" fill="none" stroke="#f4c20d" stroke-width="2"
      stroke-dasharray="4 3"/>
    <circle cx="50" cy="70" r="16" fill="#f4c20d" fill-opacity="0.85"/>
    <path d="M50,58v24M38,70h24" stroke="#2d4a3e" stroke-width="4"/>
  </svg>`;
}

/** The SVG of any card by its text form; `title` is the accessible name. */
export function cardSvg(text, title = "") {
  const c = parseCard(text);
  return c.swatter ? swatterCardSvg(title) : flyCardSvg(c.colour, c.value, title);
}

/** A small inline colour badge: the colour's shape, twice (for legends, allowed colours). */
export function colourBadge(colour, title = "") {
  const c = COLOURS[colour];
  return `<svg class="badge" viewBox="0 0 24 24" role="img"><title>${title}</title>
    ${shapeSvg(colour, 12, 12, 9.5, `fill="${c.fill}" stroke="${c.dark}" stroke-width="1.5"`)}
    ${shapeSvg(colour, 12, 12, 4, `fill="#fff" fill-opacity="0.85"`)}
  </svg>`;
}
