import styles from './card.module.css'

export const metadata = { title: 'Home' }

export default function Page() {
  return (
    <main>
      <section className="hero">
        <h1 id="title">Home</h1>
        <p>Everything above the fold is styled at first paint.</p>
        <div className={styles.card} id="card">A card from a CSS module</div>
      </section>
      <section className="below" id="below">
        <h2>Below the fold</h2>
        <p>Only seen after scrolling.</p>
        <p className={styles.fine}>Fine print from the same CSS module.</p>
      </section>
    </main>
  )
}
