// Files embedded into the binary with `with { type: "file" }` import as their path.
declare module "*/standalone.js" {
  const path: string;
  export default path;
}
declare module "*.html" {
  const path: string;
  export default path;
}
