import { useEffect, useState } from "preact/hooks";

type Theme = "light" | "dark";
const KEY = "svc.theme";
const CHANGED = "svc-theme-change";

const storedTheme = (): Theme | null => {
  const stored = localStorage.getItem(KEY);
  return stored === "light" || stored === "dark" ? stored : null;
};
const systemDark = () => matchMedia("(prefers-color-scheme: dark)");

/** The stored choice, else the system's. */
export function initialTheme(): Theme {
  return storedTheme() ?? (systemDark().matches ? "dark" : "light");
}

export function applyTheme(theme: Theme): void {
  document.documentElement.dataset.theme = theme;
  window.dispatchEvent(new Event(CHANGED));
}

/** Until the person picks a theme, a change of the system's (dark at sunset) is followed at once, without a reload. */
export function followSystemTheme(): void {
  systemDark().addEventListener("change", () => {
    if (!storedTheme()) applyTheme(initialTheme());
  });
}

/**
 * The button's name says what pressing it does ("Switch to dark theme"), so
 * nobody has to guess whether "Dark theme" names the state or the action.
 */
export function ThemeToggle() {
  const [theme, setTheme] = useState<Theme>(() => (document.documentElement.dataset.theme === "dark" ? "dark" : "light"));
  useEffect(() => {
    const update = () => setTheme(document.documentElement.dataset.theme === "dark" ? "dark" : "light");
    window.addEventListener(CHANGED, update);
    return () => window.removeEventListener(CHANGED, update);
  }, []);
  const next: Theme = theme === "dark" ? "light" : "dark";
  return (
    <button
      type="button"
      class="secondary small"
      onClick={() => {
        localStorage.setItem(KEY, next);
        applyTheme(next);
      }}
    >
      Switch to {next} theme
    </button>
  );
}
