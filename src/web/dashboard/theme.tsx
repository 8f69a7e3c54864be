import { useState } from "preact/hooks";

type Theme = "light" | "dark";
const KEY = "svc.theme";

/** The stored choice, else the system's. */
export function initialTheme(): Theme {
  const stored = localStorage.getItem(KEY);
  if (stored === "light" || stored === "dark") return stored;
  return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

export function applyTheme(theme: Theme): void {
  document.documentElement.dataset.theme = theme;
}

export function ThemeToggle() {
  const [theme, setTheme] = useState<Theme>(initialTheme());
  const dark = theme === "dark";
  return (
    <button
      type="button"
      class="secondary small"
      aria-pressed={dark}
      onClick={() => {
        const next: Theme = dark ? "light" : "dark";
        localStorage.setItem(KEY, next);
        applyTheme(next);
        setTheme(next);
      }}
    >
      Dark theme
    </button>
  );
}
