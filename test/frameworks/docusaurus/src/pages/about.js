import Page from '../components/Page';

export default function About() {
  return <Page title="About"><p>About page</p></Page>;
}
