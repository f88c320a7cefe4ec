#!/usr/bin/env python3
"""Plot `beacond-bench presence --json`: one panel per trace, each algorithm a point at (right-room rate, room flaps
per hour), beacond's in green, a red ring where an algorithm exited a beacon that was present, and a dashed line at
the trace's true room changes per hour (what a perfect answer would flap).

Usage: .build/release/beacond-bench presence --json > presence.json
       python3 scripts/plot-presence.py presence.json docs/presence.svg
Standard library only: the SVG is written by hand, so it runs on a fresh machine with nothing installed.
"""
import json
import math
import sys
from xml.sax.saxutils import escape

PANEL_W, PANEL_H, MARGIN, COLUMNS = 420, 300, 56, 2
X_MIN, X_MAX = 60.0, 100.0           # right room, %
Y_MIN, Y_MAX = 1.0, 3000.0           # flaps per hour, log scale
SHORT = [("beacond, receivers calibrated", "beacond cal."), ("beacond today", "beacond before"), ("beacond", "beacond"),
         ("room-assistant", "room-assistant"), ("ESPresense", "ESPresense+mqtt_room"), ("Home Assistant", "Home Assistant"),
         ("Bermuda", "Bermuda"), ("AltBeacon", "AltBeacon")]


def short(name):
    return next((label for prefix, label in SHORT if name.startswith(prefix)), name)


def x_of(rate, left):
    value = min(max(rate * 100, X_MIN), X_MAX)
    return left + MARGIN + (value - X_MIN) / (X_MAX - X_MIN) * (PANEL_W - MARGIN - 16)


def y_of(flaps, top):
    value = min(max(flaps, Y_MIN), Y_MAX)
    span = math.log10(Y_MAX) - math.log10(Y_MIN)
    return top + 28 + (1 - (math.log10(value) - math.log10(Y_MIN)) / span) * (PANEL_H - 28 - 40)


def panel(rows, scenario, left, top):
    out = ['<rect x="%d" y="%d" width="%d" height="%d" fill="white" stroke="#ccc"/>' % (left, top, PANEL_W, PANEL_H)]
    title = scenario if len(scenario) < 62 else scenario[:59] + "..."
    out.append('<text x="%d" y="%d" font-size="12" font-weight="bold">%s</text>' % (left + 8, top + 16, escape(title)))
    for tick in (60, 70, 80, 90, 100):
        x = x_of(tick / 100, left)
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#eee"/>' % (x, top + 28, x, top + PANEL_H - 40))
        out.append('<text x="%.1f" y="%d" font-size="10" text-anchor="middle">%d %%</text>' % (x, top + PANEL_H - 26, tick))
    for tick in (1, 10, 100, 1000):
        y = y_of(tick, top)
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/>' % (left + MARGIN, y, left + PANEL_W - 16, y))
        out.append('<text x="%d" y="%.1f" font-size="10" text-anchor="end">%d</text>' % (left + MARGIN - 4, y + 3, tick))
    out.append('<text x="%d" y="%d" font-size="10" text-anchor="middle">right room</text>'
               % (left + MARGIN + (PANEL_W - MARGIN) / 2, top + PANEL_H - 10))
    out.append('<text x="%d" y="%d" font-size="10" transform="rotate(-90 %d %d)" text-anchor="middle">flaps per hour</text>'
               % (left + 14, top + PANEL_H / 2, left + 14, top + PANEL_H / 2))
    truth = rows[0]["truthRoomChangesPerHour"]
    y = y_of(truth, top)
    out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#555" stroke-dasharray="4 3"/>'
               % (left + MARGIN, y, left + PANEL_W - 16, y))
    out.append('<text x="%d" y="%.1f" font-size="9" fill="#555" text-anchor="end">true changes %.1f/h</text>'
               % (left + PANEL_W - 18, y - 3, truth))
    for row in rows:
        x, y = x_of(row["correctRoomRate"], left), y_of(row["flapsPerHour"], top)
        ours = row["algorithm"].startswith("beacond") and not row["algorithm"].startswith("beacond today")
        colour = "#1a8f3c" if ours else "#777"
        out.append('<circle cx="%.1f" cy="%.1f" r="4" fill="%s"/>' % (x, y, colour))
        if row["falseExitsPerHour"] > 0:
            out.append('<circle cx="%.1f" cy="%.1f" r="7" fill="none" stroke="#d22" stroke-width="1.5"/>' % (x, y))
        anchor = "end" if x > left + PANEL_W - 120 else "start"
        offset = -8 if anchor == "end" else 8
        out.append('<text x="%.1f" y="%.1f" font-size="9" fill="%s" text-anchor="%s">%s</text>'
                   % (x + offset, y + 3, colour, anchor, escape(short(row["algorithm"]))))
    return out


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    with open(argv[1]) as file:
        rows = json.load(file)
    scenarios = []
    for row in rows:
        if row["scenario"] not in scenarios:
            scenarios.append(row["scenario"])
    rows_of = {s: [r for r in rows if r["scenario"] == s] for s in scenarios}
    panels = len(scenarios)
    width = COLUMNS * PANEL_W + (COLUMNS + 1) * 10
    height = math.ceil(panels / COLUMNS) * (PANEL_H + 10) + 40
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif">' % (width, height),
           '<rect width="100%" height="100%" fill="#fafafa"/>',
           '<text x="10" y="22" font-size="13">Room presence: right-room rate against room flaps per hour (log); '
           'green: beacond; red ring: false exits</text>']
    for index, scenario in enumerate(scenarios):
        left = 10 + (index % COLUMNS) * (PANEL_W + 10)
        top = 34 + (index // COLUMNS) * (PANEL_H + 10)
        out += panel(rows_of[scenario], scenario, left, top)
    out.append("</svg>")
    with open(argv[2], "w") as file:
        file.write("\n".join(out) + "\n")
    print("%s: %d traces, %d rows" % (argv[2], panels, len(rows)))


if __name__ == "__main__":
    main(sys.argv)
