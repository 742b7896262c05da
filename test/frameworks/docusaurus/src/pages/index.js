import Page from '../components/Page';

export default function Home() {
  return <Page title="Home"><p>Home page</p></Page>;
}
