extension TimelineTemplate {
    /// The page's style sheet: system fonts only, a light theme, one colour per epoch kind.
    static let style = #"""
        :root {
          --ink: #1d2430; --muted: #5d6778; --faint: #8b94a3; --line: #dfe3ea; --panel: #ffffff;
          --page: #f4f6f9; --accent: #2f6fd6; --band-a: rgba(47,111,214,.055); --band-b: rgba(0,0,0,0);
          --pass: #4c78a8; --commit: #72b7b2; --checkpoint: #54a24b; --restorationBegan: #e8a33d;
          --restorationCompleted: #8e63c4; --discard: #9a9a9a; --rewind: #d6616b;
          --mono: ui-monospace, "SF Mono", "DejaVu Sans Mono", "Liberation Mono", Menlo, Consolas, monospace;
        }
        * { box-sizing: border-box; }
        html, body { margin: 0; background: var(--page); color: var(--ink);
          font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", "Liberation Sans", sans-serif; }
        header { display: flex; flex-wrap: wrap; align-items: flex-end; gap: 8px 28px; padding: 16px 22px 10px;
          background: var(--panel); border-bottom: 1px solid var(--line); }
        header h1 { margin: 0; font-size: 19px; font-weight: 650; letter-spacing: -.01em; }
        header .store { font: 12.5px var(--mono); color: var(--muted); margin-top: 2px; word-break: break-all; }
        .stats { display: flex; flex-wrap: wrap; gap: 6px 22px; margin: 0; }
        .stats div { min-width: 78px; }
        .stats dt { font-size: 11px; text-transform: uppercase; letter-spacing: .06em; color: var(--faint); }
        .stats dd { margin: 0; font-size: 17px; font-weight: 600; font-variant-numeric: tabular-nums; }
        #legend { display: flex; flex-wrap: wrap; gap: 4px 16px; align-items: center; padding: 8px 22px;
          font-size: 12.5px; color: var(--muted); background: var(--panel); border-bottom: 1px solid var(--line); }
        #legend .group { display: flex; gap: 4px 12px; align-items: center; flex-wrap: wrap; }
        #legend .group + .group { padding-left: 14px; border-left: 1px solid var(--line); }
        #legend .item { display: inline-flex; align-items: center; gap: 5px; white-space: nowrap; }
        #legend svg { flex: none; }
        main { display: grid; grid-template-columns: minmax(0, 1fr) 420px; gap: 14px; padding: 14px 22px; }
        @media (max-width: 1100px) { main { grid-template-columns: minmax(0, 1fr); } }
        .panel { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; margin-bottom: 14px;
          overflow: hidden; }
        .panel-title { display: flex; align-items: center; gap: 10px; padding: 7px 12px; font-weight: 600;
          border-bottom: 1px solid var(--line); font-size: 13px; white-space: nowrap; }
        .panel-title .hint { font-weight: 400; color: var(--faint); font-size: 12px; overflow: hidden;
          text-overflow: ellipsis; min-width: 0; }
        .panel-title .spacer { flex: 1; }
        button, input { font: inherit; font-size: 12px; }
        button { border: 1px solid var(--line); background: #fff; border-radius: 5px; padding: 2px 9px;
          color: var(--ink); cursor: pointer; white-space: nowrap; }
        button:hover { border-color: var(--accent); color: var(--accent); }
        input[type=search] { border: 1px solid var(--line); border-radius: 5px; padding: 2px 8px; width: 190px; }
        canvas { display: block; width: 100%; }
        #epochs-canvas { height: 210px; cursor: crosshair; }
        #size-canvas { height: 110px; cursor: crosshair; }
        #lanes { position: relative; height: 460px; overflow-y: auto; overflow-x: hidden; }
        #lanes-view { position: sticky; top: 0; height: 460px; }
        #lanes-canvas { position: absolute; left: 0; top: 0; height: 460px; cursor: crosshair; }
        #lanes-labels { position: absolute; left: 0; top: 0; width: 250px; height: 460px; overflow: hidden;
          pointer-events: none; }
        .lane { position: absolute; left: 0; width: 250px; height: 22px; display: flex; align-items: center;
          font-size: 12.5px; white-space: nowrap; pointer-events: auto; padding-right: 6px; }
        .lane .toggle { width: 16px; flex: none; text-align: center; color: var(--muted); cursor: pointer;
          user-select: none; font-size: 10px; }
        .lane .name { overflow: hidden; text-overflow: ellipsis; cursor: pointer; }
        .lane .count { margin-left: 6px; color: var(--faint); font-size: 11px; flex: none; }
        .lane.selected .name { color: var(--accent); font-weight: 600; }
        aside { position: sticky; top: 10px; align-self: start; max-height: calc(100vh - 20px); overflow: auto; }
        aside .panel { margin: 0; }
        #detail-body { padding: 10px 12px; font-size: 13px; }
        #detail-body h3 { font-size: 13.5px; margin: 12px 0 4px; }
        #detail-body h3:first-child { margin-top: 0; }
        #detail-body .cmd { font: 11.5px var(--mono); color: var(--faint); margin-bottom: 3px; word-break: break-all; }
        pre { font: 12px/1.45 var(--mono); background: #f6f8fb; border: 1px solid var(--line); border-radius: 6px;
          padding: 7px 9px; margin: 0 0 6px; white-space: pre-wrap; word-break: break-word; max-height: 320px;
          overflow: auto; }
        .diff-add { color: #1f7a3d; } .diff-del { color: #b42318; } .diff-chg { color: #8a5a00; }
        .muted { color: var(--muted); }
        .pill { display: inline-block; padding: 0 7px; border-radius: 9px; font-size: 11.5px; font-weight: 600;
          color: #fff; vertical-align: 1px; }
        a.jump { color: var(--accent); cursor: pointer; text-decoration: none; }
        a.jump:hover { text-decoration: underline; }
        #launches { padding: 0 22px 24px; }
        #launches h2 { font-size: 15px; margin: 4px 0 10px; }
        .launch { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; margin-bottom: 10px; }
        .launch > summary { padding: 8px 12px; cursor: pointer; display: flex; gap: 12px; align-items: baseline;
          flex-wrap: wrap; list-style: none; }
        .launch > summary::-webkit-details-marker { display: none; }
        .launch > summary .title { font-weight: 600; }
        .launch .body { padding: 4px 12px 12px; border-top: 1px solid var(--line); }
        .counts span { margin-right: 14px; font-variant-numeric: tabular-nums; }
        table { border-collapse: collapse; width: 100%; font-size: 12.5px; margin: 6px 0 10px; }
        th { text-align: left; font-weight: 600; color: var(--muted); border-bottom: 1px solid var(--line);
          padding: 3px 8px 3px 0; }
        td { padding: 2px 8px 2px 0; border-bottom: 1px solid #f0f2f5; vertical-align: top; }
        td.path { font-family: var(--mono); font-size: 12px; word-break: break-all; }
        .note { color: var(--muted); font-style: italic; }
        footer { padding: 0 22px 22px; color: var(--faint); font-size: 12px; }
        """#
}
