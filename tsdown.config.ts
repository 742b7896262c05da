import { defineConfig } from 'tsdown'

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    client: 'src/client.ts',
  },
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  dts: true,
  clean: true,
})
