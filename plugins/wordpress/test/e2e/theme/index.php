<?php
/**
 * The only template of the end-to-end test's theme.
 *
 * @package StrataAnalytics
 */

?><!doctype html>
<html <?php language_attributes(); ?>>
<head>
<meta charset="<?php bloginfo( 'charset' ); ?>">
<?php wp_head(); ?>
</head>
<body>
<?php
while ( have_posts() ) {
	the_post();
	echo '<h1>' . esc_html( get_the_title() ) . '</h1>';
}
wp_footer();
?>
</body>
</html>
