declare module "cytoscape-fcose" {
  const ext: cytoscape.Ext;
  export default ext;
}
