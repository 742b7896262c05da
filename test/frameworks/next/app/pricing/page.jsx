import styles from '../card.module.css'
import pricing from './pricing.module.css'

export const metadata = { title: 'Pricing' }

export default function Page() {
  return (
    <main>
      <section className="hero">
        <h1 id="title">Pricing</h1>
        <p>Plans for every site.</p>
        <div className={styles.card} id="card">A card from a CSS module</div>
        <div className={pricing.plans}>
          <span className={pricing.plan} id="plan">Free</span>
          <span className={pricing.plan}>Pro</span>
        </div>
      </section>
      <section className="below" id="below">
        <h2>Below the fold</h2>
        <p>Only seen after scrolling.</p>
        <p className={styles.fine}>Fine print from the same CSS module.</p>
      </section>
    </main>
  )
}
