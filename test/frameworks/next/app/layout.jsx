import Link from 'next/link'
import './globals.css'

export const metadata = { title: 'Next fixture' }

export default function RootLayout({ children }) {
  return (
    <html lang="en">
      <body>
        <header className="site-header">
          <Link href="/">Home</Link>
          <Link href="/about">About</Link>
          <Link href="/pricing">Pricing</Link>
        </header>
        {children}
        <footer className="site-footer">Footer, below the fold</footer>
      </body>
    </html>
  )
}
