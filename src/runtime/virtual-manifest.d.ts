declare module 'virtual:unplugin-critical-css/manifest' {
  /** Where the server's critical CSS manifest is, beside its bundle. */
  const manifestUrl: () => URL
  export default manifestUrl
}
