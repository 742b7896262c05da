import Layout from '@theme/Layout';

export default function Page({ title, children }) {
  return (
    <Layout title={title}>
      <header className="ucc-hero"><h1>{title}</h1></header>
      <main>{children}</main>
      <section className="ucc-below">Below the fold</section>
    </Layout>
  );
}
