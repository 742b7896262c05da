declare module 'virtual:unplugin-critical-css/manifest' {
  /** The server's critical CSS manifest, beside its bundle. */
  const url: URL
  export default url
}
