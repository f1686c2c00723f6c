// Light/dark theme: the system preference unless the person picked one,
// remembered in localStorage and applied as data-theme on <html>.
export const THEMES = ["system", "light", "dark"] as const;
export type Theme = (typeof THEMES)[number];

const KEY = "folio.theme";

export function storedTheme(): Theme {
  const value = localStorage.getItem(KEY);
  return THEMES.includes(value as Theme) ? (value as Theme) : "system";
}

export function applyTheme(theme: Theme): void {
  if (theme === "system") document.documentElement.removeAttribute("data-theme");
  else document.documentElement.setAttribute("data-theme", theme);
}

export function setTheme(theme: Theme): void {
  localStorage.setItem(KEY, theme);
  applyTheme(theme);
}
